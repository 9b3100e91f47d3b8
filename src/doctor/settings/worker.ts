/** The settings of the worker process and of the webhook receiver it runs. */
import { type Setting } from './setting';

/** The worker: providers served, store, artifacts, rate, cache, workflow bundle, metrics, logs and audit keys. */
export const WORKER_SETTINGS: readonly Setting[] = [
  {
    name: 'ASYNCJOB_PROVIDERS',
    usedBy: ['worker', 'doctor', 'mcp'],
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
    usedBy: ['worker', 'receiver', 'doctor', 'audit', 'mcp'],
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
    name: 'ASYNCJOB_POLL_LOOP_MAX_WAIT_MS',
    usedBy: ['worker'],
    default: '`30000`',
    meaning:
      'status reads planned at most this many ms apart are made in one heartbeating activity (no workflow task, timer or activity per read); longer waits are durable timers; `0` turns the loop off. Off when `ASYNCJOB_PROVIDER_RATE_LIMIT` is set (the server bounds the fleet only per activity)',
    example: '10000',
  },
  {
    name: 'ASYNCJOB_POLL_LOOP_MAX_MS',
    usedBy: ['worker'],
    default: '`120000`',
    meaning:
      'the longest one status-polling activity keeps an operation (it holds an activity slot meanwhile) before handing it back to its workflow',
    example: '60000',
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
    name: 'ASYNCJOB_WORKFLOW_BUNDLE',
    usedBy: ['worker'],
    default: 'bundled at start',
    meaning:
      "workflow bundle written by `asyncjob bundle --out FILE`: the worker starts without bundling its workflows (seconds of CPU); refused at start unless written by this asyncjob version from this install's workflow sources",
    example: '/app/workflow-bundle.js',
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
];

/** The webhook receiver (runs inside the worker process when a port is set). */
export const WEBHOOK_RECEIVER_SETTINGS: readonly Setting[] = [
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
];
