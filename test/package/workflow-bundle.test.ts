/**
 * `asyncjob/workflow` is workflow code: a user's workflow file that imports it by name, resolved through the
 * package's `exports` map from the built package (`npm run build`'s compiler into a scratch install), bundles with
 * the SDK's `bundleWorkflowCode` with no warning and no disallowed (non-deterministic) module.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { ROOT } from './entries';

const run = promisify(execFile);

/**
 * A user's workflows: two operations in parallel through the entry, as docs/child-workflows.md shows, and a Nexus
 * caller as docs/nexus.md shows.
 */
const USER_WORKFLOW = `
import { ApplicationFailure, createNexusServiceClient } from '@temporalio/workflow';
import {
  asyncJobService,
  executeAsyncJob,
  outcomeFailure,
  startAsyncJob,
  escalationsQuery,
  DEFAULT_TASK_QUEUE,
} from 'asyncjob/workflow';

export async function nexusCaller(request: Record<string, unknown>): Promise<string> {
  const asyncjob = createNexusServiceClient({ endpoint: 'asyncjob', service: asyncJobService });
  const summary = await asyncjob.executeOperation('runJob', request as never, { scheduleToCloseTimeout: '1 hour' });
  const failure = outcomeFailure(summary);
  if (failure !== null) throw ApplicationFailure.create(failure);
  return summary.localState;
}

export async function monthEndWorkflow(month: string): Promise<string[]> {
  const request = (kind: string) => ({
    operationId: \`\${kind}-\${month}\`,
    provider: 'demo-reports',
    payload: { report: kind },
    authorisedBy: 'policy:month-end',
    createDeadline: { afterMs: 60_000 },
    resultDeadline: { afterMs: 3_600_000 },
  });
  const sales = await startAsyncJob(request('sales'), { taskQueue: DEFAULT_TASK_QUEUE });
  const stock = await executeAsyncJob(request('stock'));
  void escalationsQuery;
  return [(await sales.result()).localState, stock.localState];
}
`;

describe('asyncjob/workflow in a user workflow bundle', { timeout: 300_000 }, () => {
  it('bundles through the exports map with bundleWorkflowCode: no warning, no disallowed module', async () => {
    const project = await mkdtemp(path.join(tmpdir(), 'asyncjob-workflow-user-'));
    const pkg = path.join(project, 'node_modules', 'asyncjob');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), await readFile(path.join(ROOT, 'package.json')));
    // The package's own dependencies, and the user's SDK: one copy of each, as npm installs them.
    await symlink(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
    await symlink(path.join(ROOT, 'node_modules', '@temporalio'), path.join(project, 'node_modules', '@temporalio'));
    await run(process.execPath, [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      path.join(pkg, 'dist'),
    ]);
    const workflowsPath = path.join(project, 'workflows.ts');
    await writeFile(workflowsPath, USER_WORKFLOW);

    const said: string[] = [];
    const record = (level: string) => (message: string) => void said.push(`${level}: ${message}`);
    const logger = {
      log: (level: string, message: string) => record(level)(message),
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: record('WARN'),
      error: record('ERROR'),
    };
    const bundle = await bundleWorkflowCode({ workflowsPath, logger });
    expect(said.filter((line) => /^(WARN|ERROR)/.test(line))).toEqual([]);
    expect(bundle.code).toContain('monthEndWorkflow');
    // The entry itself came from the built package, through its exports map.
    expect(bundle.code).toContain('node_modules/asyncjob/dist/workflow-api.js');
  });
});
