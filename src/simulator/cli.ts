/**
 * `asyncjob simulate`: starts the provider simulator from the command line and runs it until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { dialectNameSchema, loadScenarioFile, ScenarioError, type ScenarioInput } from './scenario';
import { startSimulator, SimulatorOptionsError } from './server';

const USAGE = `usage: asyncjob simulate [--port N] [--host H] [--scenario FILE] [--dialect rest|lro|operation-location] [--token T]

  --port      port to listen on (default 8080; 0 picks a free one)
  --host      interface (default 127.0.0.1)
  --scenario  scenario file, JSON or YAML
  --dialect   wire dialect (default: the scenario's, else rest)
  --token     bearer token the simulator requires (default: the scenario's, else $ASYNCJOB_SIM_TOKEN)
`;

/**
 * Parses `argv` (the arguments after `simulate`), starts the simulator, prints its base URL and resolves with
 * the exit code once SIGINT or SIGTERM stopped it (2 for bad arguments, 1 for a bad scenario).
 */
export async function runSimulateCommand(argv: string[]): Promise<number> {
  let values: { port?: string; host?: string; scenario?: string; dialect?: string; token?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        scenario: { type: 'string' },
        dialect: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (err) {
    process.stderr.write(`asyncjob simulate: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`asyncjob simulate: --port: "${values.port}" is not a port number\n`);
    return 2;
  }
  const dialect = values.dialect === undefined ? undefined : dialectNameSchema.safeParse(values.dialect);
  if (dialect && !dialect.success) {
    process.stderr.write(
      `asyncjob simulate: --dialect: "${values.dialect}" is not one of rest, lro, operation-location\n`,
    );
    return 2;
  }
  let scenario: ScenarioInput | undefined;
  try {
    scenario = values.scenario === undefined ? undefined : loadScenarioFile(values.scenario);
  } catch (err) {
    if (err instanceof ScenarioError) {
      process.stderr.write(`asyncjob simulate: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const token = values.token ?? scenario?.token ?? process.env['ASYNCJOB_SIM_TOKEN'];
  let sim;
  try {
    sim = await startSimulator({ port, host: values.host ?? '127.0.0.1', dialect: dialect?.data, token, scenario });
  } catch (err) {
    if (err instanceof SimulatorOptionsError) {
      process.stderr.write(`asyncjob simulate: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  process.stdout.write(`${sim.url}\n`);
  process.stderr.write(
    `asyncjob simulate: ${sim.dialect} dialect listening on ${sim.url} (accounting at ${sim.url}/_sim/requests)\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.stop();
  return 0;
}
