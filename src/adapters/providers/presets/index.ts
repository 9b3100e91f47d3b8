/**
 * The built-in presets, one per simulator dialect (docs/dialects.md). Imported (not read from disk) so they
 * ship with the compiled library. Their `baseUrl` is `${ASYNCJOB_SIMULATOR_URL}`, substituted at load time or
 * replaced by the loader's `baseUrl` option.
 */
import lro from './lro.json';
import operationLocation from './operation-location.json';
import rest from './rest.json';

/** The names of the built-in presets. */
export const PRESET_NAMES = ['rest', 'lro', 'operation-location'] as const;

/** The built-in preset documents, unvalidated (the loader validates them like any user document). */
export const BUILT_IN_PRESETS: Readonly<Record<string, unknown>> = Object.freeze({
  rest,
  lro,
  'operation-location': operationLocation,
});
