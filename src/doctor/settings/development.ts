/** The settings of the development tools: the simulator the built-in presets speak to, the demo and the dev server. */
import { type Setting } from './setting';

/** Variables the built-in presets name (the simulator's dialects). */
export const SIMULATOR_PRESET_SETTINGS: readonly Setting[] = [
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
];

/** The demo and the dev server launcher. */
export const DEMO_SETTINGS: readonly Setting[] = [
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
    name: 'ASYNCJOB_TEMPORAL_HTTP_PORT',
    usedBy: ['demo'],
    default: 'a free port (printed)',
    meaning: 'HTTP API port of the dev server `npm start` runs',
    example: '17243',
  },
  {
    name: 'ASYNCJOB_TEMPORAL_METRICS_PORT',
    usedBy: ['demo'],
    default: 'a free port (printed)',
    meaning: 'port of the `/metrics` endpoint of the dev server `npm start` runs',
    example: '19233',
  },
  {
    name: 'ASYNCJOB_DEMO_SIMULATOR_PORT',
    usedBy: ['demo'],
    default: 'a free port (printed)',
    meaning: 'port of the provider simulator `npm start` runs (on 127.0.0.1)',
    example: '18080',
  },
  {
    name: 'ASYNCJOB_DEMO_WEBHOOK_PORT',
    usedBy: ['demo'],
    default: 'a free port (printed)',
    meaning: 'port of the webhook receiver `npm start` runs (on 127.0.0.1)',
    example: '18088',
  },
  {
    name: 'ASYNCJOB_DEMO_DATA_DIR',
    usedBy: ['demo'],
    default: '`.asyncjob` in the project',
    meaning:
      "where `npm start` keeps the dev server's database and log, the SQLite store and the artifacts (created if missing)",
    example: '/tmp/asyncjob-demo',
  },
  {
    name: 'TEMPORAL_CLI',
    usedBy: ['demo', 'npm run temporal'],
    default: '',
    meaning: 'a `temporal` binary to use instead of the one installed into `.temporal/`',
    example: '/usr/local/bin/temporal',
  },
];
