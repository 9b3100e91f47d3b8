/**
 * `asyncjob mcp`: the agent-facing MCP server (docs/agents.md). Over stdio (the default: stdout is the protocol,
 * everything else goes to stderr) it runs as one agent identity; over Streamable HTTP (`--http`, loopback unless
 * `--host` says otherwise) each request's bearer token names the agent. The operator's policy file sets what
 * each agent may do. Owns its arguments, like `audit`.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { openArtifactStore } from '../adapters/artifacts/open-artifact-store';
import { AsyncJobClient } from '../client';
import { loadConfig } from '../config';
import { agentNamed, agentServerFactory, loadAgentPolicy, startHttpServer, type AgentPolicy } from '../mcp';
import { UsageError } from './args-common';
import { declaredVariablesOf } from './declared-variables';
import { classifyError, EXIT } from './exit-codes';
import { MCP_USAGE } from './usage';

/** Where the command writes, what it reads, and how it ends. Defaults: the process's. */
export interface McpIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGINT, SIGTERM). */
  stopped(): Promise<void>;
}

const processIo: McpIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  stopped: () =>
    new Promise((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }),
};

interface McpArgs {
  policyFile: string;
  identity?: string;
  http: boolean;
  host?: string;
  port?: number;
}

const MCP_OPTIONS = {
  policy: { type: 'string' },
  identity: { type: 'string' },
  http: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** node:util's parse, its errors (an unknown option, a missing value) as usage errors. */
function parseMcpOptions(argv: string[]) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: true, options: MCP_OPTIONS });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), 'mcp');
  }
}

function parseMcpArgs(argv: string[], env: McpIo['env']): McpArgs | 'help' {
  const { values, positionals } = parseMcpOptions(argv);
  if (values.help) return 'help';
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, 'mcp');
  const policyFile = values.policy ?? env.ASYNCJOB_MCP_POLICY;
  if (policyFile === undefined || policyFile === '')
    throw new UsageError('--policy FILE (or ASYNCJOB_MCP_POLICY) is required', 'mcp');
  if (!values.http && (values.host !== undefined || values.port !== undefined))
    throw new UsageError('--host and --port go with --http', 'mcp');
  if (values.http && values.identity !== undefined)
    throw new UsageError('--identity is for stdio; over HTTP the token names the agent', 'mcp');
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    throw new UsageError(`--port: "${values.port}" is not a port`, 'mcp');
  return {
    policyFile,
    http: values.http === true,
    ...(values.identity !== undefined ? { identity: values.identity } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(port !== undefined ? { port } : {}),
  };
}

async function serve(args: McpArgs, policy: AgentPolicy, io: McpIo): Promise<number> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  let stdioAgent;
  if (!args.http) {
    const identity = args.identity ?? policy.stdioIdentity;
    if (identity === undefined)
      throw new UsageError("--identity agent:NAME (or the policy's stdioIdentity) is required over stdio", 'mcp');
    stdioAgent = agentNamed(policy, identity);
    if (stdioAgent === undefined)
      throw new UsageError(`--identity: ${identity} is not an agent of ${policy.source}`, 'mcp');
  }
  const config = loadConfig(io.env as NodeJS.ProcessEnv);
  const client = await AsyncJobClient.connect({ env: io.env as NodeJS.ProcessEnv });
  const serverFor = agentServerFactory({
    client,
    storeLocation: config.ASYNCJOB_STORE,
    artifacts: openArtifactStore(config, io.env),
    env: io.env,
    log,
    declaredVariables: (provider) => declaredVariablesOf(io.env, provider),
  });
  try {
    if (stdioAgent !== undefined) {
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
      await serverFor(stdioAgent).connect(transport);
      log(`asyncjob mcp: serving ${stdioAgent.identity} over stdio`);
      await Promise.race([closed, io.stopped(), new Promise<void>((resolve) => process.stdin.once('end', resolve))]);
      return EXIT.ok;
    }
    const running = await startHttpServer({
      policy,
      serverFor,
      ...(args.host !== undefined ? { host: args.host } : {}),
      ...(args.port !== undefined ? { port: args.port } : {}),
      log,
    });
    log(`asyncjob mcp: listening on ${running.url} (${policy.agents.length} agents in ${policy.source})`);
    await io.stopped();
    await running.close();
    return EXIT.ok;
  } finally {
    await client.close();
  }
}

/**
 * Runs `asyncjob mcp ...` (`argv`: the arguments after `mcp`) until stdin closes (stdio) or the process is asked
 * to stop (HTTP). Resolves with the exit code: 0, or the status of the error's code (2 for a bad command line,
 * environment or policy file, 5 when Temporal cannot be reached), as every `asyncjob` command exits.
 */
export async function runMcpCommand(argv: string[], io: McpIo = processIo): Promise<number> {
  let args: McpArgs | 'help';
  let policy: AgentPolicy;
  try {
    args = parseMcpArgs(argv, io.env);
    if (args === 'help') {
      io.stdout(`${MCP_USAGE}\n`);
      return EXIT.ok;
    }
    policy = loadAgentPolicy(args.policyFile, io.env);
  } catch (err) {
    const refused = classifyError(err);
    io.stderr(`asyncjob mcp: ${refused.message}\n${MCP_USAGE}\n`);
    return refused.exitCode;
  }
  try {
    return await serve(args, policy, io);
  } catch (err) {
    const failed = classifyError(err);
    io.stderr(`asyncjob mcp: ${failed.message}\n`);
    return failed.exitCode;
  }
}
