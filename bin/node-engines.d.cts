/** Whether `version` satisfies `range` in npm's range syntax (the semver package); throws on one it cannot read. */
export function satisfies(version: string, range: string): boolean;
/** The exit status of an unsupported Node.js (`ASYNCJOB_ERR_NODE_UNSUPPORTED`'s, src/core/codes.ts). */
export const UNSUPPORTED_NODE_EXIT_STATUS: number;
/** The `engines.node` range of asyncjob's package.json. */
export function requiredNodeRange(): string;
/** The one line refusing `version` (default: the running Node.js) outside `range` (default: `engines.node`), or null. */
export function unsupportedNodeMessage(version?: string, range?: string): string | null;
