/**
 * `asyncjob mcp`'s command line: help, and the refusals that happen before anything is served (exit 2).
 */
import { describe, expect, it } from 'vitest';
import { runMcpCommand, type McpIo } from '../../src/cli/mcp-command';

function io(env: Record<string, string> = {}): McpIo & { out: string; err: string } {
  const captured = {
    out: '',
    err: '',
    env,
    stdout: (text: string) => void (captured.out += text),
    stderr: (text: string) => void (captured.err += text),
    stopped: () => new Promise<void>(() => undefined),
  };
  return captured;
}

describe('asyncjob mcp command line', () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    const run = io();
    expect(await runMcpCommand(['--help'], run)).toBe(0);
    expect(run.out).toContain('usage: asyncjob mcp --policy FILE');
  });

  it.each([
    [[], '--policy FILE (or ASYNCJOB_MCP_POLICY) is required'],
    [
      ['--policy', 'examples/agents/missing.yaml'],
      'agent policy examples/agents/missing.yaml is invalid: (file): cannot read',
    ],
    [['--policy', 'examples/agents/policy.yaml', '--port', '80'], '--host and --port go with --http'],
    [['--policy', 'examples/agents/policy.yaml', '--http', '--identity', 'agent:x'], '--identity is for stdio'],
    [['--policy', 'examples/agents/policy.yaml', '--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j before serving anything (exit 2)', async (argv, message) => {
    const run = io({ REPORT_WRITER_MCP_TOKEN: 'writer-token-0123456789' });
    expect(await runMcpCommand(argv, run)).toBe(2);
    expect(run.err).toContain(message);
    expect(run.err).not.toContain('writer-token-0123456789');
  });

  it('G3: a policy whose token reference cannot be resolved is refused naming the field, and nothing connects', async () => {
    const run = io();
    expect(await runMcpCommand(['--policy', 'examples/agents/policy.yaml'], run)).toBe(2);
    expect(run.err).toContain('agents.0.token: environment variable REPORT_WRITER_MCP_TOKEN is not set');
  });
});
