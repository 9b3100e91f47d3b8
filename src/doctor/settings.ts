/**
 * The configuration reference: every environment variable, described once by the configuration schema
 * (src/config.ts, with its default and description), and every flag of the commands (`settings/*.ts`; flags are
 * not environment configuration). `docs/configuration.md` holds the tables rendered from them
 * ({@link renderSettingsTables}; a unit test keeps the two equal), and `asyncjob worker --help` shows the worker's
 * variables ({@link workerHelpText}).
 */
import { describeSettings, SETTING_GROUPS, type SettingDescription, type SettingGroup } from '../config';
import { SHARED_FLAGS } from './settings/shared-flags';
import { type Flag } from './settings/flag';
import { MCP_FLAGS } from './settings/mcp';
import { CANCEL_AND_DECIDE_FLAGS, LIST_FLAGS, START_FLAGS, WATCH_FLAGS } from './settings/operation-flags';
import {
  ADAPTER_FLAGS,
  AUDIT_FLAGS,
  WORKER_FLAGS,
  BUNDLE_FLAGS,
  CODEC_SERVER_FLAGS,
  DEV_SERVER_FLAGS,
  KEYS_FLAGS,
  REPLAY_FLAGS,
  RESULT_FLAGS,
  SIMULATE_FLAGS,
} from './settings/tool-flags';

export type { Flag } from './settings/flag';

/** Every flag, by command. The order is the order of the flags' table in docs/configuration.md. */
export const FLAGS: readonly Flag[] = [
  ...SHARED_FLAGS,
  ...START_FLAGS,
  ...WATCH_FLAGS,
  ...CANCEL_AND_DECIDE_FLAGS,
  ...LIST_FLAGS,
  ...RESULT_FLAGS,
  ...WORKER_FLAGS,
  ...ADAPTER_FLAGS,
  ...BUNDLE_FLAGS,
  ...REPLAY_FLAGS,
  ...AUDIT_FLAGS,
  ...KEYS_FLAGS,
  ...MCP_FLAGS,
  ...CODEC_SERVER_FLAGS,
  ...SIMULATE_FLAGS,
  ...DEV_SERVER_FLAGS,
];

/** The described environment variables, by group in the reference's order, in the schema's order within one. */
export function environmentSettings(): SettingDescription[] {
  const order = Object.keys(SETTING_GROUPS) as SettingGroup[];
  return describeSettings().sort((a, b) => order.indexOf(a.group) - order.indexOf(b.group));
}

/** The names of {@link environmentSettings}, in order. */
export function environmentVariables(): string[] {
  return environmentSettings().map((s) => s.name);
}

/** The value in effect when a variable is unset (markdown): the schema's default, else what its description says. */
function defaultText(s: SettingDescription): string {
  if (s.defaultValue === undefined || s.defaultValue === '') return s.whenUnset ?? '';
  return `\`${String(s.defaultValue)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function code(text: string): string {
  return text === '' ? '' : `\`${text}\``;
}

const HEADER = (first: string) => [`| ${first} | used by | default | meaning | example |`, '|---|---|---|---|---|'];

/**
 * The tables of docs/configuration.md, exactly (between its markers): one per group of variables, then the flags.
 * A secret is marked as one.
 */
export function renderSettingsTables(): string {
  const settings = environmentSettings();
  const groups = (Object.entries(SETTING_GROUPS) as [SettingGroup, string][]).map(([group, title]) => {
    const rows = settings
      .filter((s) => s.group === group)
      .map(
        (s) =>
          `| ${code(s.name)}${s.secret ? ' (secret)' : ''} | ${s.usedBy.join(', ')} | ${cell(defaultText(s))} | ${cell(s.description)} | ${cell(code(s.example))} |`,
      );
    return [`### ${title}`, '', ...HEADER('variable'), ...rows].join('\n');
  });
  const flags = FLAGS.map(
    (f) =>
      `| ${code(f.name)} | ${f.usedBy.join(', ')} | ${cell(f.default)} | ${cell(f.meaning)} | ${cell(code(f.example))} |`,
  );
  return [...groups, ['### Flags', '', ...HEADER('flag'), ...flags].join('\n')].join('\n\n');
}

/** Wraps `text` to `width` columns, continuation lines indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.join(`\n${indent}`);
}

/** The variables the worker process reads, its webhook receiver's included. */
function workerSettings(): SettingDescription[] {
  return environmentSettings().filter((s) => s.usedBy.includes('worker') || s.usedBy.includes('receiver'));
}

/** The help of `asyncjob worker` (for `asyncjob worker --help`): what it does, its environment, its exit codes. */
export function workerHelpText(): string {
  const width = 35;
  const indent = ' '.repeat(width + 2);
  const variables = workerSettings().map((s) => {
    const unset = defaultText(s);
    const meaning = `${s.description}${s.secret ? '; a secret, never printed' : ''}${unset !== '' ? ` (default ${unset})` : ''}`;
    return `  ${s.name.padEnd(width)}${wrap(meaning.replace(/`/g, ''), 112 - width, indent)}`;
  });
  return `usage: asyncjob worker [--nexus-endpoint NAME]
  Runs a worker for asyncjob's workflows and activities until SIGINT/SIGTERM, configured from the environment.
  It first checks what it is asked to serve (every provider's contract, base URL variable and credential, the
  webhook secrets when the receiver runs, the TLS and audit key files) and exits 2 naming every problem at once;
  "asyncjob doctor" checks the whole setup. Every setting: docs/configuration.md.
  --nexus-endpoint NAME: serve the asyncjob Nexus service for endpoint NAME (as ASYNCJOB_NEXUS_ENDPOINT; docs/nexus.md).

environment:
${variables.join('\n')}
  and the variables a provider contract names: credential.secretEnv, \${VAR} in baseUrl, webhook.secret.secretEnv

exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad environment (every problem named), 5 Temporal cannot be reached,
            6 unexpected error`;
}
