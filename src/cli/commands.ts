/**
 * The commands of `asyncjob` that drive operations: each turns a parsed command into client calls and output
 * (text, or one stable JSON document per `--json`), and returns its exit code. Errors are thrown and reported by
 * `run-cli.ts`. One module per concern; this one gathers them.
 */
export { type CommandContext } from './command-context';
export { startCommand } from './start-command';
export { statusCommand, watchCommand } from './status-command';
export { cancelCommand, decideCommand } from './decide-command';
export { listCommand } from './list-command';
