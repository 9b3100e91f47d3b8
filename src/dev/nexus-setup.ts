/**
 * The Nexus set-up a caller needs, made with the Temporal CLI as an operator would (docs/nexus.md): a namespace
 * for the callers' workflows, and an endpoint that routes the `asyncjob` service to the asyncjob workers'
 * namespace and task queue. Each step is done only when missing, so it is safe to repeat. Used by the
 * nexus-caller example, its test and the Nexus soak.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureTemporalCli } from './temporal-cli';

const run = promisify(execFile);

/** Where the asyncjob workers are, and what to create in front of them. */
export interface NexusSetup {
  /** The Temporal frontend, host:port. */
  address: string;
  /** The callers' namespace (created when missing). */
  callerNamespace: string;
  /** The endpoint's name (created when missing; an existing one is checked, never changed). */
  endpoint: string;
  /** The asyncjob workers' namespace and task queue: the endpoint's target. */
  targetNamespace: string;
  targetTaskQueue: string;
}

/** Runs `temporal ARGS --address ADDRESS`; resolves with its stdout, or undefined when it exits non-zero. */
async function temporal(args: string[], address: string): Promise<string | undefined> {
  const cli = ensureTemporalCli();
  try {
    const { stdout } = await run(cli.path, [...args, '--address', address], { timeout: 30_000 });
    return stdout;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return undefined;
    throw err;
  }
}

/** Runs a CLI command that must succeed; throws with its output when it does not. */
async function mustRun(args: string[], address: string): Promise<void> {
  const cli = ensureTemporalCli();
  await run(cli.path, [...args, '--address', address], { timeout: 30_000 });
}

/**
 * The commands {@link ensureNexusSetup} runs when nothing exists yet, as docs/nexus.md shows them: the callers'
 * namespace, then the endpoint.
 */
export function nexusSetupCommands(setup: NexusSetup): string[][] {
  return [
    ['operator', 'namespace', 'create', '--namespace', setup.callerNamespace],
    [
      'operator',
      'nexus',
      'endpoint',
      'create',
      '--name',
      setup.endpoint,
      '--target-namespace',
      setup.targetNamespace,
      '--target-task-queue',
      setup.targetTaskQueue,
    ],
  ];
}

/** The endpoint's target as `temporal operator nexus endpoint get` prints it, or undefined when there is none. */
async function endpointTarget(setup: NexusSetup): Promise<{ namespace?: string; taskQueue?: string } | undefined> {
  const text = await temporal(
    ['operator', 'nexus', 'endpoint', 'get', '--name', setup.endpoint, '-o', 'json'],
    setup.address,
  );
  if (text === undefined) return undefined;
  const endpoint = JSON.parse(text) as { spec?: { target?: { worker?: { namespace?: string; taskQueue?: string } } } };
  return endpoint.spec?.target?.worker ?? {};
}

/**
 * Creates the callers' namespace and the endpoint when missing (the CLI commands of {@link nexusSetupCommands}),
 * and waits until the namespace answers. Throws when an endpoint of that name targets another namespace or queue.
 * Resolves with what it created.
 */
export async function ensureNexusSetup(setup: NexusSetup): Promise<{ created: string[] }> {
  const [namespaceCommand, endpointCommand] = nexusSetupCommands(setup);
  const created: string[] = [];
  const described = await temporal(
    ['operator', 'namespace', 'describe', '--namespace', setup.callerNamespace],
    setup.address,
  );
  if (described === undefined) {
    await mustRun(namespaceCommand!, setup.address);
    created.push(`namespace ${setup.callerNamespace}`);
  }
  const target = await endpointTarget(setup);
  if (target === undefined) {
    await mustRun(endpointCommand!, setup.address);
    created.push(`Nexus endpoint ${setup.endpoint}`);
  } else if (target.namespace !== setup.targetNamespace || target.taskQueue !== setup.targetTaskQueue) {
    throw new Error(
      `Nexus endpoint ${setup.endpoint} targets namespace ${target.namespace}, task queue ${target.taskQueue}, not ${setup.targetNamespace}, ${setup.targetTaskQueue}`,
    );
  }
  // A new namespace takes a moment to reach every service of the server (its namespace cache).
  for (let attempt = 0; attempt < 60; attempt++) {
    const listed = await temporal(
      ['workflow', 'list', '--namespace', setup.callerNamespace, '--limit', '1'],
      setup.address,
    );
    if (listed !== undefined) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { created };
}
