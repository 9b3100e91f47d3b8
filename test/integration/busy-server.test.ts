/**
 * A caller waiting on many operations at once against a namespace at its limit of concurrent long polls (the
 * server's `frontend.namespaceCount`, 1,200 per frontend by default; here 4): each wait holds long polls on the
 * operation's history, the server refuses the ones over the limit (RESOURCE_EXHAUSTED), and the wait asks again
 * after a pause instead of failing. The connection here has no retry interceptor, so no retry of the SDK's hides
 * the refusals (its own gives up after ten); a grpc interceptor only counts them.
 */
import { Client, Connection } from '@temporalio/client';
import { type Interceptor, InterceptingCall } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AsyncJobClient } from '../../src/client';
import { startDevServer, type DevServer } from '../../src/dev/temporal-server';
import { uniqueId } from '../setup/temporal';

/** `RESOURCE_EXHAUSTED` of grpc-js `status`. */
const RESOURCE_EXHAUSTED = 8;

describe('waiting on many operations against a namespace at its long-poll limit', () => {
  let server: DevServer;
  let connection: Connection;
  let refused = 0;
  const counting: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, listener, next) =>
        next(metadata, {
          onReceiveStatus: (status, nextStatus) => {
            if (status.code === RESOURCE_EXHAUSTED) refused += 1;
            nextStatus(status);
          },
        }),
    });

  beforeAll(async () => {
    server = await startDevServer({ dynamicConfig: ['frontend.namespaceCount=4'] });
    connection = await Connection.connect({ address: server.address, interceptors: [counting] });
  }, 120_000);
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });

  it('every wait ends as its own bound says (the wait timeout), none with the server refusing a long poll', async () => {
    const temporal = new Client({ connection });
    // Operations no worker runs: each wait stays open until its timeout, holding its long polls all along.
    const taskQueue = uniqueId('nobody');
    const ids = Array.from({ length: 8 }, (_, i) => uniqueId(`op-busy-${i}`));
    for (const workflowId of ids)
      await temporal.workflow.start('AsyncJobWorkflow', { taskQueue, workflowId, args: [] });
    const client = new AsyncJobClient({ client: temporal, taskQueue });
    const outcomes = await Promise.allSettled(ids.map((id) => client.result(id, { timeoutMs: 4_000 })));
    expect(refused).toBeGreaterThan(0);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'resolved'))).toEqual(
      ids.map(() => 'ASYNCJOB_ERR_WAIT_TIMEOUT'),
    );
  }, 60_000);
});
