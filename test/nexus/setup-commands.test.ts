/**
 * The Temporal CLI commands docs/nexus.md tells an operator to run are the commands `ensureNexusSetup` runs (the
 * nexus-caller example and the Nexus integration tests run them against the dev server).
 */
import { describe, expect, it } from 'vitest';
import { nexusSetupCommands } from '../../src/dev/nexus-setup';
import { docCommand } from '../docs/doc-commands';

describe('docs/nexus.md: the set-up commands', () => {
  it('are the commands ensureNexusSetup runs, for the callers namespace and the endpoint of the defaults', () => {
    const commands = nexusSetupCommands({
      address: '127.0.0.1:7233',
      callerNamespace: 'asyncjob-callers',
      endpoint: 'asyncjob',
      targetNamespace: 'default',
      targetTaskQueue: 'asyncjob',
    }).map((args) => `temporal ${args.join(' ')}`);
    expect(commands).toEqual([
      'temporal operator namespace create --namespace asyncjob-callers',
      'temporal operator nexus endpoint create --name asyncjob --target-namespace default --target-task-queue asyncjob',
    ]);
    for (const command of commands) expect(docCommand('docs/nexus.md', command).text).toBe(command);
  });
});
