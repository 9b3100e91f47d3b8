/**
 * The workflow's search attributes on a real server: upserted when the state, the provider job ID or the escalation
 * reason changes, never per status read; the current details follow every read; queries read the record itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOfEveryRun } from '../setup/temporal';
import { startHarness, type Harness } from './harness';

const reads = (polls: number) => ({ steps: [{ state: 'running', polls }, { state: 'succeeded' }] });

describe('search attribute publication on a real server (E1, E2)', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = { two_reads: reads(2), twenty_reads: reads(20), forever: { steps: [{ state: 'running' }] } };
    h = await startHarness('publication', { scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => h?.stop());

  /** Runs a script to its end; the count of each history event type, and the status reads the provider saw. */
  async function run(script: string) {
    const request = h.request('rest', { script, policy: { baseDelayMs: 150, maxDelayMs: 150, minJitterRatio: 1 } });
    await h.client.start(request);
    const summary = await h.client.result(request.operationId);
    const events = await eventsOfEveryRun(h.env.client, request.operationId);
    const upserts = events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length;
    return { request, summary, events: events.length, upserts, reads: h.statusReads('rest', summary.jobId).length };
  }

  it('E1: twenty status reads cost one upsert more than three: one per state the workflow shows, none per read', async () => {
    const short = await run('two_reads');
    const long = await run('twenty_reads');
    expect(long.summary.localState).toBe('succeeded');
    expect(long.reads - short.reads).toBeGreaterThanOrEqual(18);
    // Three reads 150 ms apart end within the create's first 2 s, read and collected by its activity (P4): the one
    // upsert is `succeeded` (create_pending came with the start). Twenty take 3 s: the create's activity hands the
    // job back at 2 s, shown once (its state and job ID), then `succeeded`; `observing` waits for the copy's refresh
    // (P8), and the status activity whose read saw success collected the result too, so result_collecting never
    // reached the workflow.
    expect(short.upserts).toBe(1);
    expect(long.upserts).toBe(2);
    // The search attributes end exact: the final state, the job and the record's result deadline.
    const record = await h.client.get(long.request.operationId);
    expect(await h.client.describeOperation(long.request.operationId)).toMatchObject({
      localState: 'succeeded',
      jobId: record.jobId,
      escalationReason: null,
      resultDeadlineAt: new Date(record.deadlines.resultDeadlineMs).toISOString(),
    });
  });

  it('E2: the current details follow the status requests at every turn of the workflow, as its record does', async () => {
    const request = h.request('rest', { script: 'forever', policy: { baseDelayMs: 100, maxDelayMs: 100 } });
    await h.client.start(request);
    const handle = h.env.client.workflow.getHandle(request.operationId);
    const used = async () => (await h.client.get(request.operationId)).used.statusRequests;
    let jobId: string | undefined;
    while (h.statusReads('rest', jobId).length < 3) {
      jobId = (await h.client.get(request.operationId)).jobId;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // A message is a turn of the workflow's loop, also while status reads run inside one activity.
    await h.client.signalWebhook(request.operationId, { eventId: 'evt-publication' });
    const giveUpAtMs = Date.now() + 20_000;
    for (;;) {
      const before = await used();
      const details = (await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails;
      const after = await used();
      const shown = Number(/status requests (\d+) of/.exec(details ?? '')?.[1]);
      // Set at the top of a turn: a read reserved later in that turn (counted in the record, B2) shows at the next.
      expect(shown).toBeGreaterThanOrEqual(before - 1);
      expect(shown).toBeLessThanOrEqual(after);
      if (shown >= 3) break;
      expect(Date.now(), `the details still show ${shown} status requests`).toBeLessThan(giveUpAtMs);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await h.client.describeOperation(request.operationId)).toMatchObject({ localState: 'observing' });
    await handle.terminate('test over');
  });
});
