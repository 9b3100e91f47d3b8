/** What the `asyncjob audit` commands share: their I/O, exit codes and parsed arguments. */

/** Where the command writes and what environment it reads. Defaults: the process's. */
export interface AuditIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long verify waits before re-reading a snapshot that lags its journal. Default 1500 ms. */
  readonly settleMs?: number;
}

/** The exit codes of `asyncjob audit`. */
export const AUDIT_EXIT = { ok: 0, brokenChain: 1, usage: 2 } as const;

/** The parsed command line. */
export interface ParsedArgs {
  readonly command: 'verify' | 'show' | 'checkpoint';
  readonly operationId: string | undefined;
  readonly json: boolean;
  readonly store: string | undefined;
  readonly against: readonly string[];
  readonly withTemporal: boolean;
  readonly out: string | undefined;
  /** `verify --allow-missing-artifacts`: artifact files gone from this host are counted and named, not findings. */
  readonly allowMissingArtifacts?: boolean;
}
