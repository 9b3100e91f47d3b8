/**
 * The Node.js versions asyncjob runs on: package.json `engines.node`, checked by every entry before it loads
 * anything that may fail on another Node.js in a less clear way. The comparison is `bin/node-engines.cjs`, plain
 * CommonJS that `bin/asyncjob` runs before tsx, so the CLI, the worker and the library refuse with one message.
 */
import { unsupportedNodeMessage } from '../bin/node-engines.cjs';
import { AsyncJobError } from './core/errors';

/** The running Node.js is outside package.json `engines.node`; the message names both versions. */
export class UnsupportedNodeError extends AsyncJobError {
  constructor(message: string) {
    super('ASYNCJOB_ERR_NODE_UNSUPPORTED', message);
  }
}

/**
 * Throws {@link UnsupportedNodeError} when `version` (default: the running Node.js, `22.12.0`) is outside
 * package.json `engines.node`. Safe to repeat; reads package.json once per call.
 */
export function assertSupportedNode(version: string = process.versions.node): void {
  const message = unsupportedNodeMessage(version);
  if (message !== null) throw new UnsupportedNodeError(message);
}
