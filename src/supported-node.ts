/**
 * Imported first by each library entry (`asyncjob`, `asyncjob/client`, `asyncjob/worker`, `asyncjob/testing`):
 * loading one on a Node.js outside package.json `engines` throws {@link UnsupportedNodeError} before any other
 * module loads.
 */
import { assertSupportedNode } from './node-version';

assertSupportedNode();
