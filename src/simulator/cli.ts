/**
 * `asyncjob simulate`: starts the provider simulator from the command line and runs it until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { AsyncJobError, exitStatusOf, hasCode } from '../core/errors';
import { dialectNameSchema, loadScenarioFile } from './scenario';
import { startSimulator } from './server';

const USAGE = `usage: asyncjob simulate [--port N] [--host H] [--scenario FILE] [--dialect rest|lro|operation-location] [--token T]

  --port      port to listen on (default 8080; 0 picks a free one)
  --host      interface (default 127.0.0.1)
  --scenario  scenario file, JSON or YAML
  --dialect   wire dialect (default: the scenario's, else rest)
  --token     bearer token the simulator requires (default: the scenario's, else $ASYNCJOB_SIM_TOKEN)
`;

/** The options the command was given, or a usage error naming the bad one. */
function parseOptions(argv: string[]): SimulateOptions | 'help' {
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
    throw new AsyncJobError('ASYNCJOB_ERR_USAGE', err instanceof Error ? err.message : String(err));
  }
  if (values.help) return 'help';
  const port = values.port === undefined ? 8080 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new AsyncJobError('ASYNCJOB_ERR_USAGE', `--port: "${values.port}" is not a port number`);
  const dialect = values.dialect === undefined ? undefined : dialectNameSchema.safeParse(values.dialect);
  if (dialect && !dialect.success)
    throw new AsyncJobError(
      'ASYNCJOB_ERR_USAGE',
      `--dialect: "${values.dialect}" is not one of rest, lro, operation-location`,
    );
  const scenario = values.scenario === undefined ? undefined : loadScenarioFile(values.scenario);
  const token = values.token ?? scenario?.token ?? process.env['ASYNCJOB_SIM_TOKEN'];
  return { port, host: values.host ?? '127.0.0.1', dialect: dialect?.data, token, scenario };
}

type SimulateOptions = Parameters<typeof startSimulator>[0];

/**
 * Parses `argv` (the arguments after `simulate`), starts the simulator, prints its base URL and resolves with
 * the exit code once SIGINT or SIGTERM stopped it; a bad argument, scenario or option exits with its code's
 * status (docs/errors.md).
 */
export async function runSimulateCommand(argv: string[]): Promise<number> {
  let sim;
  try {
    const options = parseOptions(argv);
    if (options === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    sim = await startSimulator(options);
  } catch (err) {
    if (!hasCode(err)) throw err;
    process.stderr.write(`asyncjob simulate: ${err.message}\n${err.code === 'ASYNCJOB_ERR_USAGE' ? USAGE : ''}`);
    return exitStatusOf(err.code);
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
