/**
 * The check that a worker serves the provider before a start: a provider found served is not asked about again for
 * a few seconds (one DescribeTaskQueue per provider, not per start); one found unserved is asked every time.
 */
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ProviderUnservedError } from '../../src/client';
import { type Answer, clientOn, grpcError, startRequest as request } from './fake-temporal';

/** A fake server counting its calls; DescribeTaskQueue lists `pollers.now` pollers. */
function server(pollers: { now: number }) {
  const asked = { describeTaskQueue: 0, startWorkflowExecution: 0 };
  const client = clientOn({
    methods: {
      describeTaskQueue: (): Answer => {
        asked.describeTaskQueue += 1;
        return { value: { pollers: Array.from({ length: pollers.now }, (_, i) => ({ identity: `worker-${i}` })) } };
      },
      startWorkflowExecution: (): Answer => {
        asked.startWorkflowExecution += 1;
        return { value: { runId: `run-${asked.startWorkflowExecution}`, started: true } };
      },
      describeWorkflowExecution: (): Answer => ({ error: grpcError(status.NOT_FOUND, 'workflow not found') }),
      listWorkflowExecutions: (): Answer => ({ value: { executions: [] } }),
    },
    otherwise: () => ({ error: new Error('not asked in this test') }),
  });
  return { client, asked };
}

describe('the served check before a start', () => {
  it('a provider found served is not asked about again for the next starts', async () => {
    const { client, asked } = server({ now: 1 });
    for (let i = 0; i < 5; i++) await client.start(request(`op-${i}`));
    expect(asked.startWorkflowExecution).toBe(5);
    expect(asked.describeTaskQueue).toBe(1);
  });

  it('a provider found unserved is asked again: a worker that came meanwhile is seen at once', async () => {
    const pollers = { now: 0 };
    const { client, asked } = server(pollers);
    const refused = await client.start(request('op-a')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderUnservedError);
    expect(asked.startWorkflowExecution).toBe(0);
    const calls = asked.describeTaskQueue;
    expect(calls).toBeGreaterThanOrEqual(2);
    pollers.now = 1;
    await client.start(request('op-b'));
    expect(asked.startWorkflowExecution).toBe(1);
    expect(asked.describeTaskQueue).toBe(calls + 1);
  });
});
