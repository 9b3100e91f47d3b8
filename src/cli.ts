/**
 * The `asyncjob` command line: parses arguments and calls the library; no logic of its own.
 */
import { runDev } from './dev/demo';

const USAGE = `usage: asyncjob <command>

commands:
  dev        start the dev server with its Web UI, a worker, and run one operation end to end
`;

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  switch (command) {
    case 'dev':
      return runDev();
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`asyncjob: unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`asyncjob: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
