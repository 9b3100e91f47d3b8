/**
 * The configuration reference: every environment variable and flag of the worker, the webhook receiver, the
 * client, the command line, `asyncjob doctor` and the demo, in one list assembled from its families
 * (`settings/*.ts`). `docs/configuration.md` holds the table rendered from it ({@link renderSettingsTable}; a unit
 * test keeps the two equal and checks the list against the variables the code reads), and `asyncjob worker
 * --help` shows the worker's part ({@link workerHelpText}).
 */
import { EVERY_COMMAND_FLAGS } from './settings/common-flags';
import { DEMO_SETTINGS, SIMULATOR_PRESET_SETTINGS } from './settings/development';
import { CANCEL_AND_DECIDE_FLAGS, LIST_FLAGS, START_FLAGS, WATCH_FLAGS } from './settings/operation-flags';
import { MCP_SETTINGS } from './settings/mcp';
import { type Setting } from './settings/setting';
import { TEMPORAL_SETTINGS } from './settings/temporal';
import {
  ADAPTER_FLAGS,
  AUDIT_FLAGS,
  BUNDLE_FLAGS,
  DEV_SERVER_FLAGS,
  REPLAY_FLAGS,
  SIMULATE_FLAGS,
} from './settings/tool-flags';
import { WEBHOOK_RECEIVER_SETTINGS, WORKER_SETTINGS } from './settings/worker';

export type { Setting, SettingUser } from './settings/setting';

/**
 * Every setting, environment variables first, then flags by command. The order is the order of the table in
 * docs/configuration.md.
 */
export const SETTINGS: readonly Setting[] = [
  ...TEMPORAL_SETTINGS,
  ...WORKER_SETTINGS,
  ...WEBHOOK_RECEIVER_SETTINGS,
  ...SIMULATOR_PRESET_SETTINGS,
  ...DEMO_SETTINGS,
  ...EVERY_COMMAND_FLAGS,
  ...START_FLAGS,
  ...WATCH_FLAGS,
  ...CANCEL_AND_DECIDE_FLAGS,
  ...LIST_FLAGS,
  ...ADAPTER_FLAGS,
  ...BUNDLE_FLAGS,
  ...REPLAY_FLAGS,
  ...AUDIT_FLAGS,
  ...MCP_SETTINGS,
  ...SIMULATE_FLAGS,
  ...DEV_SERVER_FLAGS,
];

/** The environment variables of {@link SETTINGS}, in order. */
export function environmentVariables(): string[] {
  return [...new Set(SETTINGS.filter((s) => !s.name.startsWith('-')).map((s) => s.name))];
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function code(text: string): string {
  return text === '' ? '' : `\`${text}\``;
}

/** The markdown table of docs/configuration.md, exactly (between its markers). */
export function renderSettingsTable(): string {
  const rows = SETTINGS.map(
    (s) =>
      `| ${code(s.name)} | ${s.usedBy.join(', ')} | ${cell(s.default)} | ${cell(s.meaning)} | ${cell(code(s.example))} |`,
  );
  return ['| setting | used by | default | meaning | example |', '|---|---|---|---|---|', ...rows].join('\n');
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

/** The help of `asyncjob worker` (for `asyncjob worker --help`): what it does, its environment, its exit codes. */
export function workerHelpText(): string {
  const width = 35;
  const indent = ' '.repeat(width + 2);
  const variables = SETTINGS.filter(
    (s) => !s.name.startsWith('-') && (s.usedBy.includes('worker') || s.usedBy.includes('receiver')),
  ).map((s) => {
    const meaning = `${s.meaning}${s.default !== '' ? ` (default ${s.default})` : ''}`.replace(/`/g, '');
    return `  ${s.name.padEnd(width)}${wrap(meaning, 112 - width, indent)}`;
  });
  return `usage: asyncjob worker
  Runs a worker for asyncjob's workflows and activities until SIGINT/SIGTERM, configured from the environment.
  It first checks what it is asked to serve (every provider's contract, base URL variable and credential, the
  webhook secrets when the receiver runs, the TLS and audit key files) and exits 2 naming every problem at once;
  "asyncjob doctor" checks the whole setup. Every setting: docs/configuration.md.

environment:
${variables.join('\n')}
  and the variables a provider contract names: credential.secretEnv, \${VAR} in baseUrl, webhook.secret.secretEnv

exit codes: 0 stopped by SIGINT/SIGTERM, 2 bad environment (every problem named), 5 Temporal cannot be reached,
            6 unexpected error`;
}
