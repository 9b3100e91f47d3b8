/**
 * The simulator's scenario format (JSON or YAML, zod-validated): dialect, token, named job scripts (state
 * sequences timed in milliseconds or in status reads, hints, expiry, result payloads, faults, webhook delivery),
 * matchers choosing a script from the create payload, and scenario-wide fault rules.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { faultRuleSchema } from './faults';
import { AsyncJobError } from '../core/errors';

/** The three wire dialects documented in docs/dialects.md. */
export const dialectNameSchema = z.enum(['rest', 'lro', 'operation-location']);
/** A dialect name. */
export type DialectName = z.infer<typeof dialectNameSchema>;

/** A duration in milliseconds: fixed, or drawn from `[min, max]` with the scenario's seeded random. */
const durationMsSchema = z.union([
  z.number().int().min(0),
  z
    .object({ min: z.number().int().min(0), max: z.number().int().min(0) })
    .refine((r) => r.max >= r.min, { message: 'max must be >= min' }),
]);

/**
 * One step of a job's life. The job stays in `state` for `durationMs` (time-based) or for `polls` status reads
 * (poll-based: `polls: 2` answers this state to two status reads, the third sees the next step). The last step
 * has neither and lasts forever. `state` is the simulator's neutral name: queued, running, succeeded, failed,
 * cancelled, expired, or anything else (an unknown state such as `manual_review`).
 */
const stepSchema = z
  .object({
    state: z.string().min(1).max(100),
    durationMs: durationMsSchema.optional(),
    polls: z.number().int().min(1).optional(),
    progress: z.number().min(0).max(100).optional(),
    /** Hint in the rest status body (`poll_after_seconds`); may be negative or a non-number on purpose. */
    pollAfterSeconds: z.union([z.number(), z.string()]).optional(),
    /** Hint `next_check_at`: `{ inMs }` from now (use a huge value for "far future") or a raw string. */
    nextCheckAt: z.union([z.object({ inMs: z.number().int() }), z.string()]).optional(),
    /** Retry-After (seconds) on operation-location status answers while not final; overrides the script's. */
    retryAfterSeconds: z.number().int().min(0).optional(),
  })
  .refine((s) => !(s.durationMs !== undefined && s.polls !== undefined), {
    message: 'a step lasts either durationMs or polls, not both',
  });
/** One step of a job script (see {@link stepSchema}). */
export type Step = z.infer<typeof stepSchema>;

/** The payload served by the result endpoint. */
const resultPayloadSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('json'), body: z.unknown() }),
  z.object({ kind: z.literal('ndjson'), records: z.array(z.unknown()) }),
  z.object({
    kind: z.literal('batch'),
    items: z.number().int().min(0).max(1_000_000),
    failedItems: z.array(z.number().int().min(0)).default([]),
  }),
  z.object({
    kind: z.literal('generated'),
    sizeBytes: z
      .number()
      .int()
      .min(0)
      .max(512 * 1024 * 1024),
  }),
]);
/** A result payload description (see {@link resultPayloadSchema}). */
export type ResultPayload = z.infer<typeof resultPayloadSchema>;

/** How webhook events of a job are delivered. */
const webhookDeliverySchema = z.object({
  mode: z.enum(['once', 'twice', 'out_of_order', 'bad_signature', 'none']).default('once'),
  /** Extra delay before each delivery (late delivery). */
  delayMs: z.number().int().min(0).default(0),
});
/** Webhook delivery settings (see {@link webhookDeliverySchema}). */
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

/** A job script: what one job does from create to its end. */
const jobScriptSchema = z.object({
  steps: z
    .array(stepSchema)
    .min(1)
    .default([{ state: 'queued', durationMs: 30 }, { state: 'running', durationMs: 30 }, { state: 'succeeded' }]),
  /** Answer the create synchronously with the result (C3): rest `200`, lro `done: true`. */
  sync: z.boolean().default(false),
  /** The provider error reported when the job ends `failed`. */
  error: z.object({ code: z.string(), message: z.string() }).default({ code: 'job_failed', message: 'the job failed' }),
  /** The job's results expire this long after create: `expires_at` is reported, and after it a succeeded job reads `expired`. */
  expiresAfterMs: z.number().int().min(0).optional(),
  /** What a cancel does: the job reads `cancelled` after `afterMs`, or `succeeded` (`outcome: succeeded`, F3). */
  cancel: z
    .object({
      afterMs: z.number().int().min(0).default(0),
      outcome: z.enum(['cancelled', 'succeeded']).default('cancelled'),
    })
    .default({ afterMs: 0, outcome: 'cancelled' }),
  /** Default Retry-After (seconds) on operation-location create and status answers. */
  retryAfterSeconds: z.number().int().min(0).default(0),
  result: resultPayloadSchema.default({ kind: 'json', body: { ok: true } }),
  faults: z.array(faultRuleSchema).default([]),
  webhook: webhookDeliverySchema.default({ mode: 'once', delayMs: 0 }),
});
/** A job script (see {@link jobScriptSchema}). */
export type JobScript = z.infer<typeof jobScriptSchema>;

/**
 * Session mode (V3, opt-in): the create answer sets a session cookie bound to the job, and the listed job actions
 * without that cookie are answered `400 {"error":{"code":"session_required"}}` (not counted as status reads).
 * `rotate` sets a new value on every accepted answer of those actions; the previous value stops working.
 */
const sessionSchema = z.strictObject({
  cookie: z.boolean(),
  /** The cookie's name. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" and "-", at most 64')
    .default('sim_session'),
  /** The actions that need the cookie. */
  requireOn: z
    .array(z.enum(['status', 'cancel', 'result']))
    .min(1)
    .default(['status']),
  rotate: z.boolean().default(false),
});
/** Session settings (see {@link sessionSchema}). */
export type SessionSettings = z.infer<typeof sessionSchema>;

const RECORDABLE_HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const NEVER_RECORDED = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Chooses a script when the create payload's field at `field` (dot path) equals `equals`. */
const matcherSchema = z.object({
  field: z.string().min(1),
  equals: z.union([z.string(), z.number(), z.boolean()]),
  script: z.string().min(1),
});

/**
 * A scenario. A create picks its script by the first matching `match` rule, else by the payload field
 * `scenario` naming a script, else `defaultScript`.
 */
export const scenarioSchema = z
  .object({
    dialect: dialectNameSchema.optional(),
    token: z.string().min(1).optional(),
    seed: z.number().int().optional(),
    /** The base URL used by the `foreign_location` fault (another origin). */
    foreignBaseUrl: z.url().optional(),
    defaultScript: z.string().min(1).default('default'),
    scripts: z.record(z.string().min(1), jobScriptSchema).default({}),
    match: z.array(matcherSchema).default([]),
    faults: z.array(faultRuleSchema).default([]),
    webhook: z.object({ url: z.url(), secret: z.string().min(1) }).optional(),
    /** Maximum number of request records kept (oldest dropped first). */
    maxRecordedRequests: z.number().int().min(1).max(10_000_000).optional(),
    /** V3 session mode (see {@link sessionSchema}); off when absent. */
    session: sessionSchema.optional(),
    /** Request headers copied into each request record (`headers`), by name; never Authorization or Cookie. */
    recordHeaders: z
      .array(
        z
          .string()
          .regex(RECORDABLE_HEADER, 'not a valid HTTP header name')
          .transform((name) => name.toLowerCase())
          .refine((name) => !NEVER_RECORDED.has(name), { message: 'credentials and cookies are never recorded' }),
      )
      .max(20)
      .default([]),
  })
  .superRefine((s, ctx) => {
    const names = new Set(Object.keys(s.scripts));
    if (s.defaultScript !== 'default' && !names.has(s.defaultScript)) {
      ctx.addIssue({ code: 'custom', path: ['defaultScript'], message: `no script named "${s.defaultScript}"` });
    }
    s.match.forEach((m, i) => {
      if (!names.has(m.script))
        ctx.addIssue({ code: 'custom', path: ['match', i, 'script'], message: `no script named "${m.script}"` });
    });
  });
/** A validated scenario (see {@link scenarioSchema}). */
export type Scenario = z.infer<typeof scenarioSchema>;
/** A scenario as written in a file or passed from code, before defaults. */
export type ScenarioInput = z.input<typeof scenarioSchema>;

/** The script used when a scenario has none named `default`. */
const DEFAULT_SCRIPT: JobScript = jobScriptSchema.parse({});

/** A scenario that failed validation; `issues` name each field (`scripts.slow.steps.0.state: ...`). */
export class ScenarioError extends AsyncJobError {
  constructor(
    readonly source: string,
    readonly issues: readonly string[],
  ) {
    super('ASYNCJOB_ERR_SIM_SCENARIO_INVALID', `invalid scenario ${source}:\n  ${issues.join('\n  ')}`);
  }
}

/** Validates a scenario object, reporting every problem at once. Throws {@link ScenarioError}. */
export function parseScenario(input: unknown, source = '(inline)'): Scenario {
  const result = scenarioSchema.safeParse(input);
  if (!result.success) {
    throw new ScenarioError(
      source,
      result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`),
    );
  }
  return result.data;
}

/** Parses scenario text: JSON when `format` is `json` (or the text starts with `{`), YAML otherwise. */
export function parseScenarioText(text: string, source = '(inline)', format?: 'json' | 'yaml'): Scenario {
  let raw: unknown;
  const asJson = format === 'json' || (format === undefined && text.trimStart().startsWith('{'));
  try {
    raw = asJson ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ScenarioError(source, [
      `(root): not valid ${asJson ? 'JSON' : 'YAML'}: ${err instanceof Error ? err.message : String(err)}`,
    ]);
  }
  return parseScenario(raw ?? {}, source);
}

/** Reads and validates a scenario file (`.json`, `.yaml`, `.yml`). Reads the file once; throws {@link ScenarioError}. */
export function loadScenarioFile(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ScenarioError(path, [`(file): cannot read: ${err instanceof Error ? err.message : String(err)}`]);
  }
  return parseScenarioText(text, path, path.endsWith('.json') ? 'json' : path.match(/\.ya?ml$/) ? 'yaml' : undefined);
}

/** Reads a dot path (`a.b.0.c`) from a JSON value; undefined when absent. */
function readPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Picks the script name for a create payload (see {@link scenarioSchema}). Pure. */
export function selectScriptName(scenario: Scenario, payload: unknown): string {
  for (const m of scenario.match) {
    if (readPath(payload, m.field) === m.equals) return m.script;
  }
  const named = readPath(payload, 'scenario');
  if (typeof named === 'string' && Object.prototype.hasOwnProperty.call(scenario.scripts, named)) return named;
  return scenario.defaultScript;
}

/** The script for a name, falling back to {@link DEFAULT_SCRIPT} for `default`. */
export function scriptByName(scenario: Scenario, name: string): JobScript {
  return scenario.scripts[name] ?? DEFAULT_SCRIPT;
}
