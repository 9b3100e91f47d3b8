/**
 * The variables the tools read, each where it is used rather than by `loadConfig`: the audit checkpoint keys
 * (`src/audit/keys.ts`), deciders' key files (`src/policy/decider-keys.ts`), the built-in presets' simulator
 * variables (named by the presets' contracts), the demo and dev server (`src/dev/demo-settings.ts`,
 * `src/dev/temporal-cli.ts`) and `asyncjob mcp`'s policy file.
 */
import { z } from 'zod';
import { nonEmpty, port, setting } from './setting';

/** The Ed25519 keys of audit checkpoints, each a file or a value, not both (`src/audit/keys.ts`). */
export const checkpointKeySettings = {
  ASYNCJOB_AUDIT_SIGNING_KEY_FILE: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['audit'],
    description:
      'file: Ed25519 private key (PEM) signing audit checkpoints; or ASYNCJOB_AUDIT_SIGNING_KEY, not both (without one, checkpoints are signed with the HMAC key)',
    example: '/run/secrets/asyncjob-checkpoint.pem',
  }),
  ASYNCJOB_AUDIT_SIGNING_KEY: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['audit'],
    description: 'the same Ed25519 private key given as a value',
    example: '(from your secret store)',
    secret: true,
  }),
  ASYNCJOB_AUDIT_VERIFY_KEY_FILE: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['audit'],
    description:
      'file: Ed25519 public key (PEM) that `audit verify` checks checkpoints with; or ASYNCJOB_AUDIT_VERIFY_KEY, not both',
    example: '/etc/asyncjob/checkpoint-public.pem',
  }),
  ASYNCJOB_AUDIT_VERIFY_KEY: setting(nonEmpty().optional(), {
    group: 'audit',
    usedBy: ['audit'],
    description: 'the same Ed25519 public key given as a value',
    example: '(the PEM text)',
  }),
};

/** Where deciders keep the key files they sign decisions with (`src/policy/decider-keys.ts`, D3). */
export const deciderKeySettings = {
  ASYNCJOB_DECIDER_KEYS_DIR: setting(nonEmpty().optional(), {
    group: 'deciders',
    usedBy: ['keys', 'decide'],
    description:
      "the directory of deciders' key files: `keys new` writes a decider's key there (mode 0600, named by a hash of the identity) and `decide --sign` reads it (docs/operating.md#who-may-decide)",
    example: '/home/alice/.config/asyncjob/keys',
    whenUnset: '`$XDG_CONFIG_HOME/asyncjob/keys`, else `~/.config/asyncjob/keys`',
  }),
};

/** Variables the built-in presets name (the simulator's dialects), and `asyncjob simulate`'s token. */
export const simulatorSettings = {
  ASYNCJOB_SIMULATOR_URL: setting(z.url().optional(), {
    group: 'presets',
    usedBy: ['worker', 'adapter'],
    description:
      'base URL of the built-in presets `rest`, `lro`, `operation-location` (their `baseUrl` is `${ASYNCJOB_SIMULATOR_URL}`)',
    example: 'http://127.0.0.1:8080',
  }),
  ASYNCJOB_SIMULATOR_TOKEN: setting(nonEmpty().optional(), {
    group: 'presets',
    usedBy: ['worker'],
    description: "the built-in presets' credential (`credential.secretEnv`): the simulator's bearer token",
    example: 'sim-token',
    secret: true,
  }),
  ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: setting(nonEmpty().optional(), {
    group: 'presets',
    usedBy: ['receiver'],
    description: "the `rest` preset's webhook secret (`webhook.secret.secretEnv`); needed when the receiver runs",
    example: 'whsec-demo',
    secret: true,
  }),
  ASYNCJOB_SIM_TOKEN: setting(nonEmpty().optional(), {
    group: 'presets',
    usedBy: ['simulate'],
    description: 'the bearer token `asyncjob simulate` requires when neither `--token` nor the scenario gives one',
    example: 'sim-token',
    secret: true,
  }),
};

/** A port of `npm start`: unset (or 0) is a free one, printed. */
const freePort = () =>
  port()
    .optional()
    .transform((value) => (value === 0 ? undefined : value));

/** The demo (`npm start` = `asyncjob dev`) and the dev server launcher (`npm run temporal`). */
export const demoSettings = {
  ASYNCJOB_TEMPORAL_PORT: setting(port().default(7233), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'gRPC port of the dev server `npm start` runs (point TEMPORAL_ADDRESS at it for the CLI)',
    example: '17233',
  }),
  ASYNCJOB_UI_PORT: setting(port().default(8233), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'Web UI port of the dev server `npm start` runs',
    example: '18233',
  }),
  ASYNCJOB_TEMPORAL_HTTP_PORT: setting(freePort(), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'HTTP API port of the dev server `npm start` runs',
    example: '17243',
    whenUnset: 'a free port (printed)',
  }),
  ASYNCJOB_TEMPORAL_METRICS_PORT: setting(freePort(), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'port of the `/metrics` endpoint of the dev server `npm start` runs',
    example: '19233',
    whenUnset: 'a free port (printed)',
  }),
  ASYNCJOB_DEMO_SIMULATOR_PORT: setting(freePort(), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'port of the provider simulator `npm start` runs (on 127.0.0.1)',
    example: '18080',
    whenUnset: 'a free port (printed)',
  }),
  ASYNCJOB_DEMO_WEBHOOK_PORT: setting(freePort(), {
    group: 'demo',
    usedBy: ['demo'],
    description: 'port of the webhook receiver `npm start` runs (on 127.0.0.1)',
    example: '18088',
    whenUnset: 'a free port (printed)',
  }),
  ASYNCJOB_DEMO_DATA_DIR: setting(nonEmpty().optional(), {
    group: 'demo',
    usedBy: ['demo'],
    description:
      "where `npm start` keeps the dev server's database and log, the SQLite store and the artifacts (created if missing)",
    example: '/tmp/asyncjob-demo',
    whenUnset: '`.asyncjob` in the project',
  }),
  TEMPORAL_CLI: setting(nonEmpty().optional(), {
    group: 'demo',
    usedBy: ['demo', 'npm run temporal'],
    description: 'a `temporal` binary to use instead of the one installed into `.temporal/`',
    example: '/usr/local/bin/temporal',
  }),
};

/** `asyncjob mcp`: the agent tools over MCP (docs/agents.md). */
export const mcpSettings = {
  ASYNCJOB_MCP_POLICY: setting(nonEmpty().optional(), {
    group: 'mcp',
    usedBy: ['mcp'],
    description:
      'the agent policy file (YAML or JSON) when `--policy` is not given: each agent, its providers and bounds',
    example: '/etc/asyncjob/agents.yaml',
  }),
};
