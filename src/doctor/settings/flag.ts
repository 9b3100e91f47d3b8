/** The shape of one flag of the command-line reference (`FLAGS`, src/doctor/settings.ts). */
import { type SettingUser } from '../../config';

/** One flag of a command (environment variables are described by the configuration schema, src/config.ts). */
export interface Flag {
  /** `--json`. */
  readonly name: string;
  readonly usedBy: readonly SettingUser[];
  /** The value in effect when it is not given (markdown: a literal value in backticks); '' when there is none. */
  readonly default: string;
  readonly meaning: string;
  readonly example: string;
}
