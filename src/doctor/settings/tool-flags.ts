/**
 * The flags of the tool commands: `worker`, `adapter`, `audit`, `bundle`, `replay-check`, `keys`, `codec-server`, `simulate` and
 * `npm run temporal -- start`.
 */
import { type Flag } from './flag';

/** `asyncjob worker`. */
export const WORKER_FLAGS: readonly Flag[] = [
  {
    name: '--nexus-endpoint',
    usedBy: ['worker'],
    default: '`$ASYNCJOB_NEXUS_ENDPOINT`',
    meaning:
      'serve the `asyncjob` Nexus service for the endpoint NAME (docs/nexus.md), instead of ASYNCJOB_NEXUS_ENDPOINT',
    example: '--nexus-endpoint asyncjob',
  },
];

/** `asyncjob adapter`. */
export const ADAPTER_FLAGS: readonly Flag[] = [
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
];

/** `asyncjob audit`. */
export const AUDIT_FLAGS: readonly Flag[] = [
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
    name: '--allow-missing-artifacts',
    usedBy: ['audit'],
    default: 'off',
    meaning: '`audit verify`: pass with artifact files deliberately removed (retention); says so in the report',
    example: '--allow-missing-artifacts',
  },
  {
    name: '--out',
    usedBy: ['audit'],
    default: 'stdout',
    meaning: '`audit checkpoint`: append the checkpoint to FILE (one JSON line)',
    example: '--out checkpoints.jsonl',
  },
];

/** `asyncjob result`. */
export const RESULT_FLAGS: readonly Flag[] = [
  {
    name: '--out',
    usedBy: ['result'],
    default: 'stdout',
    meaning:
      'write the verified result to FILE: written beside it under a temporary name and renamed only once every byte matched the recorded sha256 and size; on a mismatch no file is left',
    example: '--out report.json',
  },
];

/** `asyncjob bundle`. */
export const BUNDLE_FLAGS: readonly Flag[] = [
  {
    name: '--out',
    usedBy: ['bundle'],
    default: '',
    meaning: 'required: the file the workflow bundle is written to (for ASYNCJOB_WORKFLOW_BUNDLE)',
    example: '--out /app/workflow-bundle.js',
  },
];

/** `asyncjob replay-check`. */
export const REPLAY_FLAGS: readonly Flag[] = [
  {
    name: '--bundle',
    usedBy: ['replay-check'],
    default: "this install's workflows",
    meaning: 'replay against the workflow bundle FILE `asyncjob bundle` wrote (checked as a worker checks it)',
    example: '--bundle /app/workflow-bundle.js',
  },
  {
    name: '--limit',
    usedBy: ['replay-check'],
    default: '`100`',
    meaning: 'replay the histories of at most N running operations, newest first (1 to 10000)',
    example: '--limit 500',
  },
  {
    name: '--query',
    usedBy: ['replay-check'],
    default: 'every running operation of the task queue',
    meaning: "a visibility query and-ed with the running operations' one",
    example: '--query "AsyncJobProvider = \'acme-exports\'"',
  },
  {
    name: '--history',
    usedBy: ['replay-check'],
    default: '',
    meaning:
      "replay these history files (as `temporal workflow show --output json` writes them) instead of the running operations'; repeatable, and files after it too",
    example: '--history histories/op-42.json',
  },
];

/** `asyncjob keys new`. */
export const KEYS_FLAGS: readonly Flag[] = [
  {
    name: '--for',
    usedBy: ['keys'],
    default: '',
    meaning: 'required: the decider whose key pair is made (an identity, kept in its canonical form)',
    example: '--for alice@example.com',
  },
  {
    name: '--out',
    usedBy: ['keys'],
    default: "the decider's file in ASYNCJOB_DECIDER_KEYS_DIR",
    meaning: 'write the key file to FILE instead (mode 0600; never over an existing file)',
    example: '--out /run/secrets/alice-decider-key.json',
  },
];

/** `asyncjob codec-server`. */
export const CODEC_SERVER_FLAGS: readonly Flag[] = [
  {
    name: '--port',
    usedBy: ['codec-server'],
    default: '`8888`',
    meaning: 'port the codec server listens on (`0`: a free one, printed)',
    example: '--port 8888',
  },
  {
    name: '--host',
    usedBy: ['codec-server'],
    default: '`127.0.0.1`',
    meaning: 'interface the codec server listens on; other than loopback only with ASYNCJOB_CODEC_SERVER_TOKEN',
    example: '--host 0.0.0.0',
  },
];

/** `asyncjob simulate`. */
export const SIMULATE_FLAGS: readonly Flag[] = [
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
];

/** `npm run temporal -- start`. */
export const DEV_SERVER_FLAGS: readonly Flag[] = [
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
    name: '--http-port',
    usedBy: ['npm run temporal'],
    default: 'a free port (printed)',
    meaning: "`npm run temporal -- start`: the dev server's HTTP API port",
    example: '--http-port 17243',
  },
  {
    name: '--metrics-port',
    usedBy: ['npm run temporal'],
    default: 'a free port (printed)',
    meaning: "`npm run temporal -- start`: the port of the dev server's Prometheus `/metrics` endpoint",
    example: '--metrics-port 19233',
  },
  {
    name: '--db',
    usedBy: ['npm run temporal'],
    default: 'in memory',
    meaning: "`npm run temporal -- start`: SQLite file keeping the server's state",
    example: '--db .asyncjob/temporal.db',
  },
];
