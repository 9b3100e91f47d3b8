/**
 * `asyncjob doctor`'s Nexus check, when ASYNCJOB_NEXUS_ENDPOINT is set: the endpoint exists and routes to this
 * worker, that is to its namespace and task queue (an endpoint of another queue sends the service's calls to a
 * worker that does not serve it). Read-only: nothing is created.
 */
import { Connection } from '@temporalio/client';
import { temporalConnectionSettings } from '../client/connection';
import type { Config } from '../config';
import { ok, problem, type Finding } from './findings';

/** Where an endpoint sends its calls: a worker's namespace and task queue, or an external URL. */
interface EndpointTarget {
  namespace?: string | null;
  taskQueue?: string | null;
  url?: string | null;
}

/** What the worker expects the endpoint to target, and the server address for the commands that fix it. */
interface ExpectedTarget {
  endpoint: string;
  namespace: string;
  taskQueue: string;
  address: string;
}

/** The finding for the endpoint as found (undefined: no endpoint of that name). Pure. */
export function nexusEndpointFinding(expected: ExpectedTarget, found: EndpointTarget | undefined): Finding {
  const { endpoint, namespace, taskQueue, address } = expected;
  const target = `--target-namespace ${namespace} --target-task-queue ${taskQueue}`;
  if (found === undefined)
    return problem(
      'nexus-endpoint',
      'setup',
      `Nexus endpoint ${endpoint} does not exist at ${address}`,
      `temporal operator nexus endpoint create --name ${endpoint} ${target} --address ${address}`,
    );
  if (found.namespace !== namespace || found.taskQueue !== taskQueue) {
    const actual = found.url
      ? `the external URL ${found.url}`
      : `namespace ${found.namespace}, task queue ${found.taskQueue}`;
    return problem(
      'nexus-endpoint',
      'setup',
      `Nexus endpoint ${endpoint} targets ${actual}, not this worker (namespace ${namespace}, task queue ${taskQueue})`,
      `temporal operator nexus endpoint update --name ${endpoint} ${target} --address ${address} (or set ASYNCJOB_NEXUS_ENDPOINT to the endpoint of this worker)`,
    );
  }
  return ok('nexus-endpoint', `Nexus endpoint ${endpoint} targets namespace ${namespace}, task queue ${taskQueue}`);
}

/** The endpoint named `name`, or undefined when there is none. */
async function findEndpoint(connection: Connection, name: string): Promise<EndpointTarget | undefined> {
  const answer = await connection.operatorService.listNexusEndpoints({ name, pageSize: 1 });
  const spec = (answer.endpoints ?? []).find((e) => e.spec?.name === name)?.spec;
  if (!spec) return undefined;
  const worker = spec.target?.worker;
  return {
    namespace: worker?.namespace ?? null,
    taskQueue: worker?.taskQueue ?? null,
    url: spec.target?.external?.url ?? null,
  };
}

/** The Nexus check of `endpoint` (ASYNCJOB_NEXUS_ENDPOINT), see the module comment. Never throws. */
export async function checkNexusEndpoint(config: Config, endpoint: string, timeoutMs: number): Promise<Finding> {
  let connection: Connection;
  let settings;
  try {
    settings = temporalConnectionSettings(config);
    connection = await Connection.connect({
      address: settings.address,
      connectTimeout: timeoutMs,
      ...(settings.tls ? { tls: settings.tls } : {}),
      ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    });
  } catch {
    return { check: 'nexus-endpoint', status: 'skipped', message: 'Temporal cannot be reached' };
  }
  try {
    const expected = {
      endpoint,
      namespace: settings.namespace,
      taskQueue: config.ASYNCJOB_TASK_QUEUE,
      address: settings.address,
    };
    return nexusEndpointFinding(expected, await findEndpoint(connection, endpoint));
  } catch (err) {
    return problem(
      'nexus-endpoint',
      'setup',
      `cannot read the Nexus endpoints at ${settings.address}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      'check that the server has Nexus enabled and that these credentials may read its endpoints (an operator permission)',
    );
  } finally {
    await connection.close().catch(() => undefined);
  }
}
