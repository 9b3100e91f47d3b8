/**
 * The MCP server's own error codes, and the one place any error becomes an MCP tool error: `isError: true`, one
 * text line `ASYNCJOB_ERR_...: message`. A model reads the code to decide what to do; a stack trace or an SDK
 * class never reaches it (what is not ours is logged by the server and reported as `ASYNCJOB_ERR_INTERNAL`).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The stable codes the agent-facing tools add to the client's (docs/agents.md lists them all). */
export const AGENT_CODES = {
  /** The request is outside the agent's policy; the message names the bound it broke. Nothing was created or sent. */
  ASYNCJOB_ERR_POLICY_REFUSED: "the request is outside this agent's policy",
  /** The operation ID belongs to an operation another caller started: choose another ID. */
  ASYNCJOB_ERR_OPERATION_ID_TAKEN: 'the operation ID is used by another caller',
  /** No validated result can be read (none yet, not valid, or the stored artifact does not match its hash). */
  ASYNCJOB_ERR_RESULT_UNAVAILABLE: 'no validated result can be read',
  /** The operation's story cannot be read from the audit store right now. */
  ASYNCJOB_ERR_AUDIT_UNAVAILABLE: "the operation's story cannot be read",
  /** An HTTP request without a known bearer token, or with another agent's token for this session. */
  ASYNCJOB_ERR_UNAUTHENTICATED: 'no known agent token',
  /** The policy file is invalid (every problem is named). */
  ASYNCJOB_ERR_POLICY_INVALID: 'the agent policy file is invalid',
} as const;
/** An agent-facing code. */
export type AgentCode = keyof typeof AGENT_CODES;

/** A refusal or failure decided by the MCP server itself. */
export class AgentToolError extends Error {
  constructor(
    readonly code: AgentCode | 'ASYNCJOB_ERR_NOT_FOUND',
    message: string,
    /** For `ASYNCJOB_ERR_POLICY_REFUSED`: the bound broken, e.g. `maxResultDeadline`. */
    readonly bound?: string,
  ) {
    super(message);
    this.name = 'AgentToolError';
  }
}

/** One line: newlines and runs of spaces folded. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The code and message an agent is shown for an error, or null when the error is not one of ours. */
export function agentFacingError(err: unknown): { code: string; message: string } | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { code?: unknown; refusalCode?: unknown; message?: unknown };
  if (typeof e.code !== 'string' || !e.code.startsWith('ASYNCJOB_ERR_') || typeof e.message !== 'string') return null;
  const code = e.code === 'ASYNCJOB_ERR_REFUSED' && typeof e.refusalCode === 'string' ? e.refusalCode : e.code;
  // A refusal's message starts with its code already (`ASYNCJOB_ERR_X: why`).
  const message = e.message.startsWith(`${code}: `) ? e.message.slice(code.length + 2) : e.message;
  return { code, message: oneLine(message) };
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
