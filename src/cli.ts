/**
 * The `asyncjob` command line entry point (`bin/asyncjob`, `npm start`): runs {@link runCli} on the process's
 * arguments with the real process as its world. Parsing is in `cli/args.ts`, the commands in `cli/commands.ts`.
 */
import { processDeps } from './cli/deps';
import { runCli } from './cli/run-cli';

void runCli(process.argv.slice(2), processDeps()).then((code) => {
  process.exitCode = code;
});
