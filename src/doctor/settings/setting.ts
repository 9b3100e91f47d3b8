/** The shape of one entry of the configuration reference (`SETTINGS`, src/doctor/settings.ts). */

/** Who reads a setting: a process, or the `asyncjob` command that takes the flag. */
export type SettingUser =
  | 'worker'
  | 'receiver'
  | 'client'
  | 'CLI'
  | 'doctor'
  | 'audit'
  | 'adapter'
  | 'simulate'
  | 'start'
  | 'watch'
  | 'cancel'
  | 'decide'
  | 'list'
  | 'demo'
  | 'mcp'
  | 'bundle'
  | 'replay-check'
  | 'npm run temporal'
  | 'every command';

/** One environment variable or flag. */
export interface Setting {
  /** `TEMPORAL_ADDRESS`, or a flag: `--json`. */
  readonly name: string;
  readonly usedBy: readonly SettingUser[];
  /** The value in effect when it is not given (markdown: a literal value in backticks); '' when there is none. */
  readonly default: string;
  readonly meaning: string;
  readonly example: string;
}
