/**
 * What the client asks the server, counted on the wire (a gRPC interceptor on its own connection) against the real
 * dev server, worker and simulator: a new operation is one start after the provider check (once per provider in a
 * few seconds), a join describes the run it joins, and a wait reads the history and nothing else until the
 * operation closes or escalates, its close in one long poll of its own.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AsyncJobClient } from '../../src/client';
import { startHarness, type Harness } from '../workflows/harness';

const { GetWorkflowExecutionHistoryRequest } = temporal.api.workflowservice.v1;
const CLOSE_EVENT_ONLY = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;

/**
 * The WorkflowService methods called since the last `take()`, in order; a history read that asks for the close
 * event only is `GetWorkflowExecutionHistory:close` (the request is read from the bytes the SDK sends).
 */
class CallLog {
  private calls: string[] = [];
  readonly interceptor: Interceptor = (options, nextCall) => {
    const method = options.method_definition.path.split('/').pop() ?? '';
    return new InterceptingCall(nextCall(options), {
      sendMessage: (message: Uint8Array, next) => {
        const closeOnly =
          method === 'GetWorkflowExecutionHistory' &&
          GetWorkflowExecutionHistoryRequest.decode(message).historyEventFilterType === CLOSE_EVENT_ONLY;
        this.calls.push(closeOnly ? `${method}:close` : method);
        next(message);
      },
    });
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

  it('a new operation costs the provider check and one start; its result, history reads only', async () => {
    const request = h.request('rest', { script: 'quick' });
    log.take();
    const handle = await client.start(request);
    expect(handle.joined).toBe(false);
    expect(log.take()).toEqual(['DescribeTaskQueue', 'StartWorkflowExecution']);

    expect((await handle.result()).localState).toBe('succeeded');
    const waited = log.take();
    // The close is awaited by one long poll of its own, whose event carries the summary: no second read of it.
    expect(waited.filter((c) => c === 'GetWorkflowExecutionHistory:close')).toHaveLength(1);
    expect(waited.filter((c) => c.split(':')[0] !== 'GetWorkflowExecutionHistory')).toEqual([]);
  });

  it('the next new operations of the same provider cost one start each: the provider was found served moments ago', async () => {
    for (let i = 0; i < 3; i++) {
      const handle = await client.start(h.request('rest', { script: 'quick' }));
      expect(handle.joined).toBe(false);
    }
    expect(log.take()).toEqual(['StartWorkflowExecution', 'StartWorkflowExecution', 'StartWorkflowExecution']);
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
