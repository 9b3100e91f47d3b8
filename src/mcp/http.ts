/**
 * The Streamable HTTP front of the MCP server: one path (`/mcp`), bound to loopback unless told otherwise,
 * every request authenticated by its bearer token (compared by digest, never logged). A session belongs to the
 * agent that opened it: a request with another agent's token on it is refused, so one agent can never act
 * through another's session. Host headers are checked (DNS rebinding) when bound to loopback.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { agentForToken, type AgentGrant, type AgentPolicy } from './policy';

/** The path the MCP endpoint is served at. */
const MCP_PATH = '/mcp';

/** The most bytes one request body may carry (a payload is at most 256 K characters). */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  policy: AgentPolicy;
  /** Builds the MCP server of one agent (one per session). */
  serverFor(agent: AgentGrant): McpServer;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  log(line: string): void;
}

/** A running HTTP front. */
export interface RunningHttpServer {
  /** `http://host:port/mcp`. */
  url: string;
  close(): Promise<void>;
}

interface Session {
  agent: AgentGrant;
  transport: StreamableHTTPServerTransport;
  server: McpServer;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Serves the MCP endpoint over Streamable HTTP until closed. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const sessions = new Map<string, Session>();
  let allowedHosts: string[] | undefined;

  const openSession = async (agent: AgentGrant, req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const server = options.serverFor(agent);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { agent, transport, server });
      },
      ...(allowedHosts ? { allowedHosts, enableDnsRebindingProtection: true } : {}),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_PATH) return refuse(res, 404, 'not found');
    const token = bearerToken(req);
    const agent = token === undefined ? undefined : agentForToken(options.policy, token);
    if (agent === undefined)
      return refuse(res, 401, 'ASYNCJOB_ERR_UNAUTHENTICATED: a known agent bearer token is required', {
        'www-authenticate': 'Bearer realm="asyncjob"',
      });
    const sessionId = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) return refuse(res, 404, 'no such session (initialize a new one)');
      if (session.agent.identity !== agent.identity)
        return refuse(res, 403, 'ASYNCJOB_ERR_UNAUTHENTICATED: this session belongs to another agent');
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) return openSession(agent, req, res, body);
    return refuse(res, 400, 'no session: send initialize first');
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.log(`asyncjob mcp: http request failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) refuse(res, 400, 'bad request');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  if (LOOPBACK.has(host)) allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    async close() {
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
