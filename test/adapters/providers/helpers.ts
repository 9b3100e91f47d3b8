import {
  parseProviderContract,
  type ProviderAnswer,
  type ProviderContract,
  BUILT_IN_PRESETS,
} from '../../../src/adapters/providers';
import { observationSchema, type Observation } from '../../../src/core/observation';

/** The simulator's base URL used by the tests. */
export const BASE = 'http://127.0.0.1:4010';

/** Loads a built-in preset with the test base URL. */
export function preset(name: 'rest' | 'lro' | 'operation-location'): ProviderContract {
  return parseProviderContract(structuredClone(BUILT_IN_PRESETS[name]), name, { baseUrl: BASE });
}

/** Builds an answer as the HTTP layer hands it over. */
export function answer(
  status: number,
  options: { json?: unknown; text?: string; headers?: Record<string, string>; parseError?: string } = {},
): ProviderAnswer {
  const headers: Record<string, string> = {
    'x-request-id': 'req-1',
    ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  const out: ProviderAnswer = { status, headers, receivedAtMs: 1_764_410_000_000, durationMs: 12 };
  if (options.json !== undefined) out.bodyJson = options.json;
  if (options.text !== undefined) out.bodyText = options.text;
  if (options.parseError !== undefined) out.bodyParseError = options.parseError;
  return out;
}

/** Asserts the observation satisfies the shared schema (bounded sizes) and returns it. */
export function valid(observation: Observation): Observation {
  observationSchema.parse(observation);
  return observation;
}
