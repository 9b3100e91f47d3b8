/**
 * `asyncjob mcp` through the entries the docs give, exactly as a user runs them: `node bin/asyncjob mcp` (what the
 * installed `asyncjob` command is) and `npx asyncjob mcp`, each connected to the run's dev server, answer an MCP
 * client's `tools/list`. The SDK's `Client` over stdio is the agent host.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, inject, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const TOOLS = [
  'get_audit_story',
  'get_operation',
  'get_result',
  'list_providers',
  'request_cancel',
  'request_extension',
  'start_operation',
  'wait_for_change',
];

/** A policy with one stdio agent; its token is a digest, so no secret needs to be in the environment. */
function policyFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcp-entry-'));
  const file = path.join(dir, 'agents.yaml');
  writeFileSync(
    file,
    'version: 1\nauthorisedBy: policy:mcp-entry\nstdioIdentity: agent:entry\nagents:\n' +
      '  - identity: agent:entry\n    token: { sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 }\n' +
      '    providers:\n      - name: demo-reports\n        maxCreateDeadline: 1m\n        maxResultDeadline: 15m\n' +
      '        maxStatusRequests: 10\n    mayCancel: false\n',
  );
  return file;
}

describe('asyncjob mcp through its documented entries', () => {
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it.each([
    ['node bin/asyncjob mcp', process.execPath, ['bin/asyncjob']],
    ['npx asyncjob mcp', 'npx', ['asyncjob']],
  ])('%s starts and answers tools/list with every agent tool', async (_title, command, args) => {
    let stderr = '';
    const transport = new StdioClientTransport({
      command,
      args: [...args, 'mcp', '--policy', policyFile()],
      cwd: ROOT,
      env: {
        ...(process.env as Record<string, string>),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    client = new Client({ name: 'entry-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort(), stderr).toEqual(TOOLS);
    expect(stderr).toContain('asyncjob mcp: serving agent:entry over stdio');
  });
});
