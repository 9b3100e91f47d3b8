/**
 * The MCP server of one agent identity: the agent-facing tools with their descriptions (written for a model),
 * zod input and output schemas, and the operation resource `asyncjob://operations/{operationId}`. Every tool
 * answers structured content that matches its output schema, or an MCP tool error with our code (`errors.ts`).
 * There is no tool that decides an escalation (G2).
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTools } from './agent-tools';
import { toolErrorResult } from './errors';
import {
  cancelInputShape,
  extensionInputShape,
  operationInputShape,
  providersOutputShape,
  requestOutputShape,
  resultInputShape,
  resultOutputShape,
  startInputShape,
  startOutputShape,
  storyOutputShape,
  waitInputShape,
  waitOutputShape,
} from './tool-schemas';
import { variableViews } from './views';

/** The server's version as MCP clients see it. */
const MCP_SERVER_VERSION = '0.1.0';

const INSTRUCTIONS = `asyncjob runs long jobs at external HTTP APIs durably for you: start_operation once, then
wait_for_change (bounded) until the operation is final, then get_result. You never hold credentials: providers
are called by asyncjob's workers. Your bounds (providers, deadlines, status checks, cancels, result access) are
set by an operator; list_providers shows them. When an operation is escalated, a person decides: you may explain
what you need with request_extension, then wait_for_change for their answer. You cannot approve anything.`;

/** Structured content plus the same as JSON text, for clients that read only text. */
function answer(structured: Record<string, unknown>, text?: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: text ?? JSON.stringify(structured) }] };
}

/** What each registration needs: the server, the agent's tools, and the error boundary of a tool call. */
interface Registrar {
  server: McpServer;
  tools: AgentTools;
  run(work: () => Promise<CallToolResult>): Promise<CallToolResult>;
}

const readOnly = { readOnlyHint: true, openWorldHint: false };

/** Builds the MCP server for one agent. `log` receives what an operator must see (never sent to the agent). */
export function createAgentServer(tools: AgentTools, log: (line: string) => void): McpServer {
  const server = new McpServer({ name: 'asyncjob', version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  const run = async (work: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await work();
    } catch (err) {
      return toolErrorResult(err, log);
    }
  };
  const registrar = { server, tools, run };
  registerStartTools(registrar);
  registerWatchTools(registrar);
  registerRequestTools(registrar);
  registerResultTools(registrar);
  return server;
}

/** list_providers, start_operation. */
function registerStartTools({ server, tools, run }: Registrar): void {
  server.registerTool(
    'list_providers',
    {
      title: 'What you may use',
      description:
        'Lists the providers you may start operations at, with the longest deadlines and most status checks you may ask for at each, the variables each start there takes, whether you may request cancels, which results you may read, and the longest single wait_for_change. Call it first.',
      outputSchema: providersOutputShape,
      annotations: readOnly,
    },
    () =>
      run(async () => {
        const agent = tools.agent;
        return answer({
          identity: agent.identity,
          mayCancel: agent.mayCancel,
          results: agent.results,
          maxWaitMs: agent.maxWaitMs,
          providers: await Promise.all(
            agent.providers.map(async (p) => {
              const declared = await tools.declaredVariables(p.name);
              return {
                name: p.name,
                maxCreateDeadlineMs: p.maxCreateDeadlineMs,
                maxResultDeadlineMs: p.maxResultDeadlineMs,
                maxStatusRequests: p.maxStatusRequests,
                ...(declared === undefined ? {} : { variables: variableViews(declared) }),
              };
            }),
          ),
        });
      }),
  );

  server.registerTool(
    'start_operation',
    {
      title: 'Start a long job',
      description:
        'Starts a job at a provider and returns at once with its operation (it runs durably without you). Idempotent per operationId: the same request again joins the same operation (joined: true) and never starts a second job; a changed payload under the same ID is refused with ASYNCJOB_ERR_FINGERPRINT_MISMATCH (use a new ID). Deadlines and status checks default to, and may not exceed, your policy; a request outside it is refused with ASYNCJOB_ERR_POLICY_REFUSED naming the bound, before anything is created. variables (an object of strings) fill the operation variables the provider declares and are part of the request; a value the adapter refuses is ASYNCJOB_ERR_INVALID_VARIABLE naming the variable, before anything is sent. Never put credentials in the payload or the variables.',
      inputSchema: startInputShape,
      outputSchema: startOutputShape,
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    (input) => run(async () => answer(await tools.start(input))),
  );
}

/** get_operation, wait_for_change, and the operation resource. */
function registerWatchTools({ server, tools, run }: Registrar): void {
  server.registerTool(
    'get_operation',
    {
      title: 'Read an operation',
      description:
        "Reads one of your operations now: asyncjob's state and the provider's, progress, status checks used of allowed, the next poll time and why then, deadlines, the escalation waiting for a person (with its text and options), the cancel intent, people's approvals and the result summary. To wait for news use wait_for_change instead of calling this in a loop.",
      inputSchema: operationInputShape,
      outputSchema: { operation: startOutputShape.operation },
      annotations: readOnly,
    },
    ({ operationId }) => run(async () => answer({ operation: await tools.getOperation(operationId) })),
  );

  server.registerTool(
    'wait_for_change',
    {
      title: 'Wait for news',
      description:
        "Waits until one of your operations changes (its state, the provider's state or progress, an escalation or a person's decision, the result) and returns it; returns at once when it already differs from sinceChangeToken or is final, and after waitMs at the latest (timedOut: true; call again to keep waiting). This is how to wait: do not poll get_operation.",
      inputSchema: waitInputShape,
      outputSchema: waitOutputShape,
      annotations: readOnly,
    },
    ({ operationId, sinceChangeToken, waitMs }, extra) =>
      run(async () => answer({ ...(await tools.waitForChange(operationId, sinceChangeToken, waitMs, extra.signal)) })),
  );

  server.registerResource(
    'operation',
    new ResourceTemplate('asyncjob://operations/{operationId}', { list: undefined }),
    {
      title: 'An operation',
      description: 'One of your operations as get_operation shows it (JSON).',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const operationId = String(variables.operationId);
      const operation = await tools.getOperation(decodeURIComponent(operationId));
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(operation) }] };
    },
  );
}

/** request_cancel, request_extension: an agent asks; people and the workflow's rules decide (G2). */
function registerRequestTools({ server, tools, run }: Registrar): void {
  server.registerTool(
    'request_cancel',
    {
      title: 'Ask for a cancel',
      description:
        "Records your request to cancel one of your operations (who: you; why: reason) and asks the provider once. Accepted means recorded, not done: the provider's answer decides whether it ends cancelled, or succeeded or failed if the job finished first; follow it with wait_for_change. Refused when your policy does not allow cancels (ASYNCJOB_ERR_POLICY_REFUSED), when the provider has no cancel, or when a cancel was already requested.",
      inputSchema: cancelInputShape,
      outputSchema: requestOutputShape,
      annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    ({ operationId, reason, expectedEffect }) =>
      run(async () => answer({ ...(await tools.requestCancel(operationId, reason, expectedEffect)) })),
  );

  server.registerTool(
    'request_extension',
    {
      title: 'Ask a person for more time or checks',
      description:
        'Asks a person for more time (extendMs) or more status checks (extraStatusRequests) on one of your operations, with your reason. It raises an escalation (or joins the open one) and returns at once: it grants nothing. A person answers with asyncjob decide; you see their decision in get_operation (approvals, escalation gone) or with wait_for_change. Each amount is at most your policy bound for the provider, and at most what a person could grant (else refused naming the bound: ASYNCJOB_ERR_EXTENSION_BEYOND_GRANT). Asking again while a person decides joins the same escalation; an operation takes only a few requests an hour (ASYNCJOB_ERR_EXTENSION_RATE_LIMITED says when the next is taken).',
      inputSchema: extensionInputShape,
      outputSchema: requestOutputShape,
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ operationId, reason, extendMs, extraStatusRequests }) =>
      run(async () => {
        const asked = {
          ...(extendMs !== undefined ? { extendMs } : {}),
          ...(extraStatusRequests !== undefined ? { extraStatusRequests } : {}),
        };
        return answer({ ...(await tools.requestExtension(operationId, reason, asked)) });
      }),
  );
}

/** get_result, get_audit_story. */
function registerResultTools({ server, tools, run }: Registrar): void {
  server.registerTool(
    'get_result',
    {
      title: 'Read the result',
      description:
        "Gives the result summary of one of your operations (validation, size, sha256, record and failed-item counts, problems) and, when your policy allows it and the operation succeeded with a validated result, the body up to maxBytes (the policy's limit at most; truncated says whether more exists). bodyWithheld says why no body is given.",
      inputSchema: resultInputShape,
      outputSchema: resultOutputShape,
      annotations: readOnly,
    },
    ({ operationId, maxBytes }) => run(async () => answer({ ...(await tools.getResult(operationId, maxBytes)) })),
  );

  server.registerTool(
    'get_audit_story',
    {
      title: 'Explain what happened',
      description:
        "Tells the story of one of your operations from its tamper-evident journal, one line per step, as the operator's `asyncjob audit show` prints it: who started it, every status check and why the next one waited, escalations, people's decisions, the result. Use it to explain an outcome.",
      inputSchema: operationInputShape,
      outputSchema: storyOutputShape,
      annotations: readOnly,
    },
    ({ operationId }) =>
      run(async () => {
        const story = await tools.auditStory(operationId);
        return answer({ ...story }, story.text);
      }),
  );
}
