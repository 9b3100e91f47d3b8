/**
 * The settings of `asyncjob dev` (= `npm start`), from the environment, validated at once with every problem
 * named by its variable. Each variable's type, default and description are the configuration schema's
 * (`demoSettings` in src/config/tools.ts, docs/configuration.md). Every listener the demo opens on a port we can
 * set has one: a port left unset, empty or 0 is a free one, printed.
 */
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, environmentSchema } from '../config';

const variables = environmentSchema.shape;

/** The demo's settings schema, by field; {@link DEMO_VARIABLES} names each field's variable. */
export const demoSettingsSchema = z.object({
  temporalPort: variables.ASYNCJOB_TEMPORAL_PORT,
  uiPort: variables.ASYNCJOB_UI_PORT,
  temporalHttpPort: variables.ASYNCJOB_TEMPORAL_HTTP_PORT,
  temporalMetricsPort: variables.ASYNCJOB_TEMPORAL_METRICS_PORT,
  simulatorPort: variables.ASYNCJOB_DEMO_SIMULATOR_PORT,
  webhookPort: variables.ASYNCJOB_DEMO_WEBHOOK_PORT,
  dataDir: variables.ASYNCJOB_DEMO_DATA_DIR,
});
/** The validated demo settings: ports (undefined: a free one), and the data directory (absolute). */
export type DemoSettings = Omit<z.infer<typeof demoSettingsSchema>, 'dataDir'> & { dataDir: string };

/** The environment variable behind each field. */
export const DEMO_VARIABLES: Readonly<Record<keyof z.infer<typeof demoSettingsSchema>, string>> = {
  temporalPort: 'ASYNCJOB_TEMPORAL_PORT',
  uiPort: 'ASYNCJOB_UI_PORT',
  temporalHttpPort: 'ASYNCJOB_TEMPORAL_HTTP_PORT',
  temporalMetricsPort: 'ASYNCJOB_TEMPORAL_METRICS_PORT',
  simulatorPort: 'ASYNCJOB_DEMO_SIMULATOR_PORT',
  webhookPort: 'ASYNCJOB_DEMO_WEBHOOK_PORT',
  dataDir: 'ASYNCJOB_DEMO_DATA_DIR',
};

/** An empty variable is an unset one. */
const given = (value: string | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : value;

/**
 * Reads the demo's settings from `env`. The data directory defaults to `.asyncjob` in `projectRoot`; a relative
 * ASYNCJOB_DEMO_DATA_DIR is resolved against `cwd`, as a shell user means it. Throws {@link ConfigError} naming
 * every bad variable. Pure.
 */
export function demoSettings(env: NodeJS.ProcessEnv, projectRoot: string, cwd: string): DemoSettings {
  const result = demoSettingsSchema.safeParse({
    temporalPort: given(env.ASYNCJOB_TEMPORAL_PORT),
    uiPort: given(env.ASYNCJOB_UI_PORT),
    temporalHttpPort: given(env.ASYNCJOB_TEMPORAL_HTTP_PORT),
    temporalMetricsPort: given(env.ASYNCJOB_TEMPORAL_METRICS_PORT),
    simulatorPort: given(env.ASYNCJOB_DEMO_SIMULATOR_PORT),
    webhookPort: given(env.ASYNCJOB_DEMO_WEBHOOK_PORT),
    dataDir: given(env.ASYNCJOB_DEMO_DATA_DIR),
  });
  if (!result.success)
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const field = issue.path[0] as keyof typeof DEMO_VARIABLES | undefined;
        return `${field !== undefined ? DEMO_VARIABLES[field] : '(environment)'}: ${issue.message}`;
      }),
    );
  const { dataDir, ...ports } = result.data;
  return {
    ...ports,
    dataDir: dataDir !== undefined ? path.resolve(cwd, dataDir) : path.join(projectRoot, '.asyncjob'),
  };
}
