/**
 * What the configuration schema carries beside each variable's type and default: its description, who reads it,
 * whether it is a secret and its group, in a typed zod registry ({@link settingRegistry}). docs/configuration.md,
 * `asyncjob worker --help` and `asyncjob doctor` are rendered from it (src/doctor/settings.ts).
 */
import { z } from 'zod';

/** Who reads a setting: a process, or the `asyncjob` command that takes it. */
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
  | 'keys'
  | 'result'
  | 'codec-server'
  | 'npm run temporal'
  | 'every command'
  | 'every command but audit checkpoint, mcp, simulate'
  | 'every command but doctor, audit, mcp, simulate';

/** The groups of the configuration reference, in the order it shows them, with their titles. */
export const SETTING_GROUPS = {
  temporal: 'Temporal connection',
  worker: 'The worker',
  receiver: 'The webhook receiver (in the worker process)',
  audit: 'Audit keys',
  payloads: 'Encrypted payloads and the codec server',
  deciders: "Deciders' signing keys",
  presets: 'The built-in presets and the provider simulator',
  demo: 'The demo and the dev server',
  mcp: 'Agents over MCP',
} as const;
/** A group of {@link SETTING_GROUPS}. */
export type SettingGroup = keyof typeof SETTING_GROUPS;

/** The description of one environment variable. */
export interface SettingMeta {
  readonly group: SettingGroup;
  readonly usedBy: readonly SettingUser[];
  /** What it sets (markdown: names and literal values in backticks). */
  readonly description: string;
  /** A value as a user would write it; for a secret, where it comes from, never a value. */
  readonly example: string;
  /** A credential or key: never printed or logged. */
  readonly secret?: true;
  /** What holds when it is unset and the schema has no default value: `unlimited`, `system roots`. */
  readonly whenUnset?: string;
}

/** The descriptions of the configuration schema's variables, by field schema. */
export const settingRegistry = z.registry<SettingMeta>();

/**
 * Describes `schema` as a setting and returns it. Each field schema is described once: a schema already
 * described (a shared instance) is refused, since its description would be overwritten.
 */
export function setting<S extends z.ZodType>(schema: S, meta: SettingMeta): S {
  if (settingRegistry.has(schema)) throw new Error(`a setting's schema is described twice: ${meta.description}`);
  settingRegistry.add(schema, meta);
  return schema;
}

/** A TCP port number (0 to 65535) given as text. */
export const port = () => z.coerce.number().int().min(0).max(65535);
/** A string that is not empty after trimming. */
export const nonEmpty = () => z.string().trim().min(1);
