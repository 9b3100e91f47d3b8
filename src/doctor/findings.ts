/**
 * What `asyncjob doctor` and the worker's start-up check report: one finding per line, `ok` or a problem with
 * how to fix it, and the exit code a set of findings means (the same failure gives the same code everywhere).
 */

/** How a check came out. `warn` does not fail the check; `skipped` means a check it depends on failed. */
type FindingStatus = 'ok' | 'warn' | 'problem' | 'skipped';

/**
 * What kind of problem: `environment` (a setting is invalid or names something missing: exit 2, as the worker
 * and the CLI exit for a bad environment), `connection` (Temporal cannot be reached: exit 5, as the CLI), or
 * `setup` (the world around the settings is not ready: a namespace, search attributes, the store, a port: exit 1).
 */
export type ProblemKind = 'environment' | 'connection' | 'setup';

/** One line of the report. */
export interface Finding {
  /** The check: `configuration`, `temporal`, `namespace`, `search-attributes`, `store`, `provider`, ... */
  readonly check: string;
  /** What the check was about when there are several (a provider's name). */
  readonly subject?: string;
  readonly status: FindingStatus;
  /** What was found; names variables and files, never a secret's value. */
  readonly message: string;
  /** How to fix it (for `warn` and `problem`). */
  readonly fix?: string;
  /** For a problem. */
  readonly kind?: ProblemKind;
}

/** The exit codes of `asyncjob doctor` (docs/configuration.md). */
export const DOCTOR_EXIT = {
  /** Every check passed (warnings allowed). */
  ok: 0,
  /** A setup problem: namespace, search attributes, store, a port in use, the artifact directory. */
  problem: 1,
  /** A bad environment (or a bad command line): an invalid setting, a missing variable or file. */
  environment: 2,
  /** Temporal cannot be reached (address, TLS, API key). */
  connection: 5,
} as const;

/** A problem finding. */
export function problem(check: string, kind: ProblemKind, message: string, fix: string, subject?: string): Finding {
  return { check, ...(subject !== undefined ? { subject } : {}), status: 'problem', kind, message, fix };
}

/** An ok finding. */
export function ok(check: string, message: string, subject?: string): Finding {
  return { check, ...(subject !== undefined ? { subject } : {}), status: 'ok', message };
}

/** The exit code of a report: a bad environment first (fix that first), then the connection, then the rest. */
export function exitCodeOf(findings: readonly Finding[]): number {
  const kinds = new Set(findings.filter((f) => f.status === 'problem').map((f) => f.kind ?? 'setup'));
  if (kinds.has('environment')) return DOCTOR_EXIT.environment;
  if (kinds.has('connection')) return DOCTOR_EXIT.connection;
  if (kinds.size > 0) return DOCTOR_EXIT.problem;
  return DOCTOR_EXIT.ok;
}
