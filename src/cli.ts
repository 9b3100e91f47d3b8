/**
 * The `asyncjob` command line entry point (`bin/asyncjob`, `npm start`): runs {@link runCli} on the process's
 * arguments with the real process as its world. Parsing is in `cli/args.ts`, the commands in `cli/commands.ts`.
 * A Node.js outside package.json `engines` is refused first (one line, `ASYNCJOB_ERR_NODE_UNSUPPORTED`'s exit 2),
 * before the commands' modules load (the registry is pure data and imports nothing).
 */
import { unsupportedNodeMessage } from '../bin/node-engines.cjs';
import { exitStatusOf } from './core/errors';
import type * as Deps from './cli/deps';
import type * as RunCli from './cli/run-cli';

const unsupported = unsupportedNodeMessage();
if (unsupported !== null) {
  process.stderr.write(`asyncjob: ${unsupported}\n`);
  process.exitCode = exitStatusOf('ASYNCJOB_ERR_NODE_UNSUPPORTED');
} else {
  // Loaded only now: on an unsupported Node.js nothing but the check above has run.
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded after the check, typed by the imports above */
  const { processDeps } = require('./cli/deps') as typeof Deps;
  const { runCli } = require('./cli/run-cli') as typeof RunCli;
  /* eslint-enable @typescript-eslint/no-require-imports */
  void runCli(process.argv.slice(2), processDeps()).then((code) => {
    process.exitCode = code;
  });
}
