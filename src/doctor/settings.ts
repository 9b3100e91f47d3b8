/**
 * The configuration reference: every environment variable and flag of the worker, the webhook receiver, the
 * client, the command line, `asyncjob doctor` and the demo, in one list. `docs/configuration.md` holds the table
 * rendered from it ({@link renderSettingsTable}; a unit test keeps the two equal and checks the list against the
 * variables the code reads), and `asyncjob worker --help` shows the worker's part ({@link workerHelpText}).
 */

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

const temporalUsers: readonly SettingUser[] = ['worker', 'client', 'CLI', 'doctor', 'audit'];

/** Every setting, environment variables first, then flags by command. */
export const SETTINGS: readonly Setting[] = [
  // Temporal connection, one reading for every process (src/client/connection.ts).
  {
    name: 'TEMPORAL_ADDRESS',
    usedBy: temporalUsers,
    default: '`127.0.0.1:7233`',
    meaning: 'host:port of the Temporal frontend',
    example: 'temporal.internal:7233',
  },
  {
    name: 'TEMPORAL_NAMESPACE',
    usedBy: temporalUsers,
    default: '`default`',
    meaning: "the Temporal namespace; it must exist with asyncjob's search attributes registered",
    example: 'payments-prod',
  },
  {
    name: 'TEMPORAL_TLS_CERT',
    usedBy: temporalUsers,
    default: '',
    meaning: 'file: client certificate (PEM) for mTLS; set together with TEMPORAL_TLS_KEY',
    example: '/etc/asyncjob/client.pem',
  },
  {
    name: 'TEMPORAL_TLS_KEY',
    usedBy: temporalUsers,
    default: '',
    meaning: "file: the client certificate's private key (PEM); set together with TEMPORAL_TLS_CERT",
    example: '/etc/asyncjob/client.key',
  },
  {
    name: 'TEMPORAL_TLS_CA',
    usedBy: temporalUsers,
    default: 'system roots',
    meaning: "file: CA certificate (PEM) the server's certificate is checked against",
    example: '/etc/asyncjob/ca.pem',
  },
  {
    name: 'TEMPORAL_TLS_SERVER_NAME',
    usedBy: temporalUsers,
    default: '',
    meaning: 'TLS server name override',
    example: 'temporal.internal',
  },
  {
    name: 'TEMPORAL_API_KEY',
    usedBy: temporalUsers,
    default: '',
    meaning: 'API key (Temporal Cloud); turns TLS on; never printed',
    example: '(from your secret store)',
  },
  {
    name: 'ASYNCJOB_TASK_QUEUE',
    usedBy: ['worker', 'client', 'CLI'],
    default: '`asyncjob`',
    meaning: "the workflows' task queue: clients start operations on the queue the worker serves",
    example: 'asyncjob-reports',
  },
  // The worker.
  {
    name: 'ASYNCJOB_PROVIDERS',
    usedBy: ['worker', 'doctor'],
    default: '',
    meaning:
      'required: the providers served, comma-separated contract files or names (searched in ASYNCJOB_PROVIDERS_PATH, then the presets); each is served under its name:, which must agree with its file name',
    example: './providers/reports.yaml,vm-images',
  },
  {
    name: 'ASYNCJOB_PROVIDERS_PATH',
    usedBy: ['worker', 'doctor', 'adapter'],
    default: '',
    meaning: 'directories (separated by `:`) searched for a contract given by name, before the built-in presets',
    example: './providers:/etc/asyncjob/providers',
  },
  {
    name: 'ASYNCJOB_STORE',
    usedBy: ['worker', 'receiver', 'doctor', 'audit'],
    default: '`sqlite:.asyncjob/asyncjob.db`',
    meaning: 'the operation store: `sqlite:PATH` or `postgres://...`; migrations are applied when a worker starts',
    example: 'postgres://asyncjob@db:5432/asyncjob',
  },
  {
    name: 'ASYNCJOB_ARTIFACTS_DIR',
    usedBy: ['worker', 'doctor'],
    default: '`.asyncjob/artifacts`',
    meaning: 'directory where collected results are stored (created if missing)',
    example: '/var/lib/asyncjob/artifacts',
  },
  {
    name: 'ASYNCJOB_PROVIDER_RATE_LIMIT',
    usedBy: ['worker'],
    default: 'unlimited',
    meaning: 'provider calls per second per provider: strict per worker process, an average across the fleet',
    example: '20',
  },
  {
    name: 'ASYNCJOB_MAX_CACHED_WORKFLOWS',
    usedBy: ['worker'],
    default: '`128`',
    meaning:
      "workflows kept in memory (about 1 MiB each); sets the worker's memory, not the number of waiting operations",
    example: '512',
  },
  {
    name: 'ASYNCJOB_METRICS_ADDRESS',
    usedBy: ['worker', 'receiver', 'doctor'],
    default: '',
    meaning:
      "host:port of the Prometheus endpoint (`/metrics`): Temporal's runtime metrics, `asyncjob_provider_requests`, `asyncjob_escalations`, `asyncjob_webhook_requests`; off when unset",
    example: '0.0.0.0:9464',
  },
  {
    name: 'ASYNCJOB_LOG_LEVEL',
    usedBy: ['worker', 'receiver'],
    default: '`info`',
    meaning: '`debug`, `info`, `warn` or `error`; JSON lines on stderr',
    example: 'warn',
  },
  {
    name: 'ASYNCJOB_AUDIT_HMAC_KEY_FILE',
    usedBy: ['worker', 'audit', 'doctor'],
    default: '',
    meaning:
      'file holding the HMAC key that signs the audit chain, kept outside the database (preferred over ASYNCJOB_AUDIT_HMAC_KEY; not both)',
    example: '/run/secrets/asyncjob-audit-hmac',
  },
  {
    name: 'ASYNCJOB_AUDIT_HMAC_KEY',
    usedBy: ['worker', 'audit', 'doctor'],
    default: '',
    meaning: 'the same HMAC key given as a value (the `_FILE` form keeps it out of the environment)',
    example: '(from your secret store)',
  },
  {
    name: 'ASYNCJOB_AUDIT_SIGNING_KEY_FILE',
    usedBy: ['audit'],
    default: '',
    meaning:
      'file: Ed25519 private key (PEM) signing audit checkpoints; or ASYNCJOB_AUDIT_SIGNING_KEY, not both (without one, checkpoints are signed with the HMAC key)',
    example: '/run/secrets/asyncjob-checkpoint.pem',
  },
  {
    name: 'ASYNCJOB_AUDIT_SIGNING_KEY',
    usedBy: ['audit'],
    default: '',
    meaning: 'the same Ed25519 private key given as a value',
    example: '(from your secret store)',
  },
  {
    name: 'ASYNCJOB_AUDIT_VERIFY_KEY_FILE',
    usedBy: ['audit'],
    default: '',
    meaning:
      'file: Ed25519 public key (PEM) that `audit verify` checks checkpoints with; or ASYNCJOB_AUDIT_VERIFY_KEY, not both',
    example: '/etc/asyncjob/checkpoint-public.pem',
  },
  {
    name: 'ASYNCJOB_AUDIT_VERIFY_KEY',
    usedBy: ['audit'],
    default: '',
    meaning: 'the same Ed25519 public key given as a value',
    example: '(the PEM text)',
  },
  // The webhook receiver (runs inside the worker process when a port is set).
  {
    name: 'ASYNCJOB_WEBHOOK_PORT',
    usedBy: ['worker', 'receiver', 'doctor'],
    default: '',
    meaning: 'port of the webhook receiver run beside the worker (`POST /webhooks/<provider>`); no receiver when unset',
    example: '8088',
  },
  {
    name: 'ASYNCJOB_WEBHOOK_HOST',
    usedBy: ['receiver', 'doctor'],
    default: '`0.0.0.0`',
    meaning: 'interface the webhook receiver listens on',
    example: '127.0.0.1',
  },
  // Variables the built-in presets name (the simulator's dialects).
  {
    name: 'ASYNCJOB_SIMULATOR_URL',
    usedBy: ['worker', 'adapter'],
    default: '',
    meaning:
      'base URL of the built-in presets `rest`, `lro`, `operation-location` (their `baseUrl` is `${ASYNCJOB_SIMULATOR_URL}`)',
    example: 'http://127.0.0.1:8080',
  },
  {
    name: 'ASYNCJOB_SIMULATOR_TOKEN',
    usedBy: ['worker'],
    default: '',
    meaning: "the built-in presets' credential (`credential.secretEnv`): the simulator's bearer token",
    example: 'sim-token',
  },
  {
    name: 'ASYNCJOB_SIMULATOR_WEBHOOK_SECRET',
    usedBy: ['receiver'],
    default: '',
    meaning: "the `rest` preset's webhook secret (`webhook.secret.secretEnv`); needed when the receiver runs",
    example: 'whsec-demo',
  },
  {
    name: 'ASYNCJOB_SIM_TOKEN',
    usedBy: ['simulate'],
    default: '',
    meaning: 'the bearer token `asyncjob simulate` requires when neither `--token` nor the scenario gives one',
    example: 'sim-token',
  },
  // The demo and the dev server launcher.
  {
    name: 'ASYNCJOB_TEMPORAL_PORT',
    usedBy: ['demo'],
    default: '`7233`',
    meaning: 'gRPC port of the dev server `npm start` runs (point TEMPORAL_ADDRESS at it for the CLI)',
    example: '17233',
  },
  {
    name: 'ASYNCJOB_UI_PORT',
    usedBy: ['demo'],
    default: '`8233`',
    meaning: 'Web UI port of the dev server `npm start` runs',
    example: '18233',
  },
  {
    name: 'TEMPORAL_CLI',
    usedBy: ['demo', 'npm run temporal'],
    default: '',
    meaning: 'a `temporal` binary to use instead of the one installed into `.temporal/`',
    example: '/usr/local/bin/temporal',
  },

  // Flags every `asyncjob` command takes.
  {
    name: '--json',
    usedBy: ['every command', 'doctor'],
    default: 'off',
    meaning: 'one stable JSON document on stdout (shapes in docs/cli.md)',
    example: 'asyncjob status op-42 --json',
  },
  {
    name: '--verbose',
    usedBy: ['every command'],
    default: 'off',
    meaning: 'error details (stack, causes, every invalid field) on stderr; `-v`',
    example: 'asyncjob start ... --verbose',
  },
  {
    name: '--help',
    usedBy: ['every command', 'doctor'],
    default: '',
    meaning: "the command's usage; `-h`",
    example: 'asyncjob worker --help',
  },
  // start
  {
    name: '--provider',
    usedBy: ['start'],
    default: '',
    meaning: 'required: the provider (a name the worker serves)',
    example: '--provider reports',
  },
  {
    name: '--operation-id',
    usedBy: ['start'],
    default: '',
    meaning: 'required: our operation ID (also the workflow ID); the same request under it joins the run',
    example: '--operation-id report-2026-11-acme',
  },
  {
    name: '--payload',
    usedBy: ['start'],
    default: '',
    meaning: "required: the job's payload, JSON inline or `@FILE`",
    example: '--payload @report.json',
  },
  {
    name: '--started-by',
    usedBy: ['start'],
    default: '',
    meaning: 'required: who starts it',
    example: '--started-by service:billing',
  },
  {
    name: '--authorised-by',
    usedBy: ['start'],
    default: '',
    meaning: 'required: what authorises it',
    example: '--authorised-by policy:monthly-reports',
  },
  {
    name: '--create-deadline',
    usedBy: ['start'],
    default: '',
    meaning: 'required: until when the create may be tried: a duration from the start or an ISO-8601 instant',
    example: '--create-deadline 5m',
  },
  {
    name: '--result-deadline',
    usedBy: ['start'],
    default: '',
    meaning: 'required: until when a result is awaited (then it escalates)',
    example: '--result-deadline 2h',
  },
  {
    name: '--client-reference',
    usedBy: ['start'],
    default: '',
    meaning: 'a reference sent to the provider where the contract says (reconciliation by reference)',
    example: '--client-reference inv-2211',
  },
  {
    name: '--policy',
    usedBy: ['start'],
    default: "the provider's",
    meaning: 'poll policy overrides, JSON inline or `@FILE` (`baseDelayMs`, `maxDelayMs`, `maxStatusRequests`, ...)',
    example: '--policy \'{"maxStatusRequests":60}\'',
  },
  {
    name: '--wait',
    usedBy: ['start'],
    default: 'off',
    meaning: 'wait until the operation ends or escalates (exit 7: needs a decision) and exit by its state',
    example: '--wait',
  },
  {
    name: '--until-final',
    usedBy: ['start', 'watch'],
    default: 'off',
    meaning: 'with --wait (and for watch): wait past an escalation until the operation is final',
    example: '--wait --until-final',
  },
  {
    name: '--allow-unserved-provider',
    usedBy: ['start'],
    default: 'off',
    meaning: "start even when no worker polls the provider's task queue now (a durable start during a worker outage)",
    example: '--allow-unserved-provider',
  },
  // watch
  {
    name: '--interval',
    usedBy: ['watch'],
    default: '`1s`',
    meaning: 'how often the operation is read',
    example: '--interval 5s',
  },
  // cancel and decide
  {
    name: '--by',
    usedBy: ['cancel', 'decide'],
    default: '',
    meaning: 'required: who asks (recorded)',
    example: '--by alice@example.com',
  },
  {
    name: '--reason',
    usedBy: ['cancel', 'decide'],
    default: '',
    meaning: 'required: why (recorded)',
    example: '--reason "month end"',
  },
  {
    name: '--expected-effect',
    usedBy: ['cancel'],
    default: '',
    meaning: 'what the cancel should achieve (recorded)',
    example: '--expected-effect "the export stops"',
  },
  {
    name: '--option',
    usedBy: ['decide'],
    default: '',
    meaning: 'the option chosen, one of those offered (without it, decide shows them)',
    example: '--option extend',
  },
  {
    name: '--extend',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend`: how much longer, within the offered bound',
    example: '--extend 15m',
  },
  {
    name: '--checks',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend`: more status requests, within the offered bound',
    example: '--checks 4',
  },
  {
    name: '--transport-failures',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend` after `provider_failure`: more transport failures allowed',
    example: '--transport-failures 5',
  },
  {
    name: '--rate-limited',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `extend` after `rate_limited`: more consecutive 429s allowed',
    example: '--rate-limited 3',
  },
  {
    name: '--job-id',
    usedBy: ['decide'],
    default: '',
    meaning: 'with `adopt_job`: the provider job kept',
    example: '--job-id job_7ad2',
  },
  // list
  {
    name: '--escalated',
    usedBy: ['list'],
    default: '',
    meaning: 'only escalated operations (as `--state escalated`)',
    example: 'asyncjob list --escalated',
  },
  {
    name: '--state',
    usedBy: ['list'],
    default: 'every state',
    meaning: 'only operations in this local state',
    example: '--state observing',
  },
  {
    name: '--provider',
    usedBy: ['list'],
    default: 'every provider',
    meaning: 'only operations at this provider',
    example: '--provider reports',
  },
  {
    name: '--reason',
    usedBy: ['list'],
    default: 'every reason',
    meaning: 'only escalations with this reason',
    example: '--reason rate_limited',
  },
  {
    name: '--limit',
    usedBy: ['list'],
    default: '`100`',
    meaning: 'at most this many operations',
    example: '--limit 20',
  },
  // adapter
  {
    name: '--base-url',
    usedBy: ['adapter'],
    default: "the document's",
    meaning: "replaces the contract's `baseUrl`",
    example: '--base-url http://127.0.0.1:8080',
  },
  {
    name: '--require-env',
    usedBy: ['adapter'],
    default: 'off',
    meaning: 'an unset `${VAR}` in `baseUrl` is an error, as it is for the worker',
    example: '--require-env',
  },
  // audit
  {
    name: '--store',
    usedBy: ['audit'],
    default: '`$ASYNCJOB_STORE`',
    meaning: 'the store to read, instead of ASYNCJOB_STORE',
    example: '--store sqlite:/var/lib/asyncjob/asyncjob.db',
  },
  {
    name: '--operation',
    usedBy: ['audit'],
    default: 'every operation',
    meaning: '`audit verify`: check one operation only',
    example: '--operation report-2026-11-acme',
  },
  {
    name: '--against',
    usedBy: ['audit'],
    default: '',
    meaning: '`audit verify`: hold the store to the checkpoints in FILE (repeatable)',
    example: '--against checkpoints.jsonl',
  },
  {
    name: '--with-temporal',
    usedBy: ['audit'],
    default: 'off',
    meaning: "`audit verify`: also hold the store to Temporal's history",
    example: '--with-temporal',
  },
  {
    name: '--out',
    usedBy: ['audit'],
    default: 'stdout',
    meaning: '`audit checkpoint`: append the checkpoint to FILE (one JSON line)',
    example: '--out checkpoints.jsonl',
  },
  // simulate
  {
    name: '--port',
    usedBy: ['simulate'],
    default: '`8080`',
    meaning: "the simulator's port (0 picks a free one)",
    example: '--port 0',
  },
  {
    name: '--host',
    usedBy: ['simulate'],
    default: '`127.0.0.1`',
    meaning: "the simulator's interface",
    example: '--host 0.0.0.0',
  },
  {
    name: '--scenario',
    usedBy: ['simulate'],
    default: '',
    meaning: 'scenario file (JSON or YAML): scripts, faults, webhooks',
    example: '--scenario examples/scenarios/rest-mixed.yaml',
  },
  {
    name: '--dialect',
    usedBy: ['simulate'],
    default: "the scenario's, else `rest`",
    meaning: '`rest`, `lro` or `operation-location`',
    example: '--dialect lro',
  },
  {
    name: '--token',
    usedBy: ['simulate'],
    default: "the scenario's, else `$ASYNCJOB_SIM_TOKEN`",
    meaning: 'the bearer token the simulator requires',
    example: '--token sim-token',
  },
  // npm run temporal -- start
  {
    name: '--port',
    usedBy: ['npm run temporal'],
    default: '`7233`',
    meaning: "`npm run temporal -- start`: the dev server's gRPC port",
    example: '--port 17233',
  },
  {
    name: '--ui-port',
    usedBy: ['npm run temporal'],
    default: '`8233`',
    meaning: '`npm run temporal -- start`: the Web UI port',
    example: '--ui-port 18233',
  },
  {
    name: '--db',
    usedBy: ['npm run temporal'],
    default: 'in memory',
    meaning: "`npm run temporal -- start`: SQLite file keeping the server's state",
    example: '--db .asyncjob/temporal.db',
  },
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
