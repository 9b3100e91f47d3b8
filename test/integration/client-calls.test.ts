/**
 * What the client asks the server, counted on the wire (a gRPC interceptor on its own connection) against the real
 * dev server, worker and simulator: a new operation is one start after the provider check, a join describes the run
 * it joins, and a wait reads the history and nothing else until the operation closes or escalates.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AsyncJobClient } from '../../src/client';
import { startHarness, type Harness } from '../workflows/harness';

/** The WorkflowService methods called since the last `take()`, in order. */
class CallLog {
  private calls: string[] = [];
  readonly interceptor: Interceptor = (options, nextCall) => {
    this.calls.push(options.method_definition.path.split('/').pop() ?? '');
    return new InterceptingCall(nextCall(options));
  };
  take(): string[] {
    const taken = this.calls;
    this.calls = [];
    return taken;
  }
}

describe('the client asks the server only what it needs', () => {
  let h: Harness;
  let connection: Connection;
  let client: AsyncJobClient;
  const log = new CallLog();

  beforeAll(async () => {
    const scripts = {
      quick: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }], result: { kind: 'json', body: {} } },
      review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] },
    };
    h = await startHarness('client-calls', { scenarios: { rest: { scripts } } as never });
    connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [log.interceptor] });
    const temporal = new Client({ connection, namespace: inject('temporalNamespace') });
    client = new AsyncJobClient({ client: temporal, taskQueue: h.taskQueue });
  });
  afterAll(async () => {
    await connection?.close();
    await h?.stop();
  });

  it('a new operation costs the provider check and one start; its result, one describe and history reads', async () => {
    const request = h.request('rest', { script: 'quick' });
    log.take();
    const handle = await client.start(request);
    expect(handle.joined).toBe(false);
    expect(log.take()).toEqual(['DescribeTaskQueue', 'StartWorkflowExecution']);

    expect((await handle.result()).localState).toBe('succeeded');
    const waited = log.take();
    expect(waited.filter((c) => c === 'DescribeWorkflowExecution')).toHaveLength(1);
    expect(waited.filter((c) => c !== 'DescribeWorkflowExecution' && c !== 'GetWorkflowExecutionHistory')).toEqual([]);
  });

  it('a second start of the same request joins it, after describing the run it joins', async () => {
    const request = h.request('rest', { script: 'quick' });
    const first = await client.start(request);
    log.take();
    const again = await client.start(request);
    expect(again).toMatchObject({ joined: true, runId: first.runId, traceId: first.traceId });
    expect(log.take()).toContain('DescribeWorkflowExecution');
  });

  it('a wait returns at an escalation, confirmed by one query', async () => {
    const request = h.request('rest', { script: 'review' });
    const handle = await client.start(request);
    log.take();
    const summary = await handle.result();
    expect(summary).toMatchObject({ localState: 'escalated', escalation: { reason: 'unknown_state' } });
    expect(log.take().filter((c) => c === 'QueryWorkflow')).toHaveLength(1);
  });
});
