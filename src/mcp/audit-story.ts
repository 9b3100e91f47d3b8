/**
 * The story of an operation for an agent, exactly as `asyncjob audit show ID` prints it (T3): the command is run
 * in-process against the store the server is configured with. A store problem is logged for the operator and
 * shown to the agent without its detail (a connection string can carry a password).
 */
import { runAuditCommand } from '../audit/cli';
import { AgentToolError } from './errors';

/** The story: one line per journal entry, and whether the chain checked out. */
export interface AuditStory {
  text: string;
  chainIntact: boolean;
}

/** Reads the story of `operationId` from the store at `storeLocation`. Read-only; safe to repeat. */
export async function readAuditStory(
  operationId: string,
  storeLocation: string,
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
): Promise<AuditStory> {
  let out = '';
  let err = '';
  const code = await runAuditCommand(['show', operationId, '--store', storeLocation], {
    stdout: (text) => (out += text),
    stderr: (text) => (err += text),
    env,
  });
  if (code === 0 || code === 1) return { text: out, chainIntact: code === 0 };
  log(`asyncjob mcp: audit story of ${operationId}: ${err.trim()}`);
  throw new AgentToolError(
    'ASYNCJOB_ERR_AUDIT_UNAVAILABLE',
    `the story of ${operationId} cannot be read from the audit store now (the server logged why)`,
  );
}
