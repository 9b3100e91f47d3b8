/**
 * `npm run temporal -- ensure` installs the CLI if missing and prints its path;
 * `npm run temporal -- start [--port N] [--ui-port N] [--http-port N] [--metrics-port N] [--db FILE]` runs a dev
 * server until Ctrl-C; the HTTP API and metrics ports are free ones when not given, and printed.
 */
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { startDevServer } from '../src/dev/temporal-server';

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const flag = (name: string): string | undefined => {
    const i = rest.indexOf(name);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  if (command === 'ensure') {
    const cli = ensureTemporalCli();
    console.log(`${cli.path} (${cli.source})`);
    return;
  }
  if (command === 'start') {
    const port = flag('--port');
    const uiPort = flag('--ui-port');
    const httpPort = flag('--http-port');
    const metricsPort = flag('--metrics-port');
    const server = await startDevServer({
      port: port ? Number(port) : 7233,
      uiPort: uiPort ? Number(uiPort) : 8233,
      ...(httpPort ? { httpPort: Number(httpPort) } : {}),
      ...(metricsPort ? { metricsPort: Number(metricsPort) } : {}),
      dbFile: flag('--db'),
    });
    console.log(
      `temporal ${server.serverVersion} at ${server.address}, Web UI ${server.uiUrl ?? '(headless)'}, HTTP API port ${server.httpPort}, metrics http://127.0.0.1:${server.metricsPort}/metrics, pid ${server.pid}`,
    );
    const shutdown = (): void => void server.stop().then(() => process.exit(0));
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
    return;
  }
  console.error(
    'usage: temporal.ts ensure | start [--port N] [--ui-port N] [--http-port N] [--metrics-port N] [--db FILE]',
  );
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
