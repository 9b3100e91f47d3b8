/**
 * The MCP server's own refusal, and the one place any error becomes an MCP tool error: `isError: true`, one text
 * line `ASYNCJOB_ERR_...: message`. A model reads the code to decide what to do; a stack trace or an SDK class never
 * reaches it (what is not ours is logged by the server and reported as `ASYNCJOB_ERR_INTERNAL`). The codes are the
 * one registry's (`core/codes.ts`, docs/errors.md).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { shownError } from '../client/errors';
import { type ErrorCode } from '../core/codes';
import { AsyncJobError } from '../core/errors';

/** A refusal or failure decided by the MCP server itself (`ASYNCJOB_ERR_POLICY_REFUSED`, ...). */
export class AgentToolError extends AsyncJobError {
  constructor(
    code: ErrorCode,
    message: string,
    /** For `ASYNCJOB_ERR_POLICY_REFUSED`: the bound broken, e.g. `maxResultDeadline`. */
    readonly bound?: string,
  ) {
    super(code, message);
  }
}

/** One line: newlines and runs of spaces folded. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The code and message an agent is shown for an error, or null when the error is not one of ours. A refusal by the
 * workflow shows the workflow's own code and its text (both data of the error, never parsed from its message).
 */
function agentFacingError(err: unknown): { code: ErrorCode; message: string } | null {
  if (!(err instanceof AsyncJobError)) return null;
  const shown = shownError(err);
  return { code: shown.code, message: oneLine(shown.text) };
}

/**
 * Turns anything a tool handler threw into an MCP tool error. Ours keep their code and message; anything else
 * is logged through `log` (with its stack, for the operator) and shown as `ASYNCJOB_ERR_INTERNAL`.
 */
export function toolErrorResult(err: unknown, log: (line: string) => void): CallToolResult {
  const ours = agentFacingError(err);
  if (ours === null) {
    log(`asyncjob mcp: unexpected error in a tool: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return {
      isError: true,
      content: [{ type: 'text', text: 'ASYNCJOB_ERR_INTERNAL: an unexpected error (the server logged it)' }],
    };
  }
  return { isError: true, content: [{ type: 'text', text: `${ours.code}: ${ours.message}` }] };
}
