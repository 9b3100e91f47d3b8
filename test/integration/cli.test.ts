/**
 * The `asyncjob` CLI end to end: a real Temporal dev server, real workers and activities, the provider simulator
 * (the workflow tests' harness). Every `--json` document is checked against the shapes docs/cli.md documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { startHarness, type Harness } from '../workflows/harness';
import {
  cancelDoc,
  decideDoc,
  errorDoc,
  listDoc,
  runOn,
  startArgs,
  startDoc,
  statusDoc,
  watchDoc,
} from './front-door-cli';

describe('asyncjob CLI against a real server, worker and simulator', () => {
  let h: Harness;

  beforeAll(async () => {
    const scripts = {
      progressing: {
        steps: [
          { state: 'queued', polls: 1 },
          { state: 'running', polls: 2, progress: 30 },
          { state: 'running', polls: 2, progress: 80 },
          { state: 'succeeded', progress: 100 },
        ],
      },
      review_then_done: {
        steps: [{ state: 'running', polls: 1 }, { state: 'manual_review', polls: 1 }, { state: 'succeeded' }],
      },
      forever: { steps: [{ state: 'running' }] },
    };
    h = await startHarness('cli', { scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => h?.stop());

  const cli = (argv: string[]) => runOn(h.client, argv);

  it('start --wait runs an operation to a verified result (exit 0); a second start joins it; a changed one is refused (exit 3)', async () => {
    const request = h.request('rest', { script: 'progressing' });
    const first = await cli([...startArgs(request), '--wait', '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(EXIT.ok);
    const doc = startDoc.parse(first.docs[0]);
    expect(doc).toMatchObject({
      operationId: request.operationId,
      joined: false,
      summary: { localState: 'succeeded', result: { validation: 'valid' } },
    });

    const again = await cli([...startArgs(request), '--json']);
    expect(again.code).toBe(EXIT.ok);
    expect(startDoc.parse(again.docs[0])).toMatchObject({
      joined: true,
      runId: doc.runId,
      traceId: doc.traceId,
      summary: null,
    });

    const changed = await cli([...startArgs({ ...request, payload: { report: 'other' } }), '--json']);
    expect(changed.code).toBe(EXIT.refused);
    expect(errorDoc.parse(changed.docs[0])).toMatchObject({ code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH', exitCode: 3 });
    expect(changed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('P8: watch --json follows progress to the final state; every document matches asyncjob.watch/v1', async () => {
    const request = h.request('rest', { script: 'progressing' });
    expect((await cli(startArgs(request))).code).toBe(EXIT.ok);
    const watched = await cli(['watch', request.operationId, '--interval', '20ms', '--json']);
    expect(watched.code).toBe(EXIT.ok);
    const docs = watched.docs.map((d) => watchDoc.parse(d));
    const end = docs.at(-1)!;
    expect(end).toMatchObject({ event: 'end', exitCode: 0, operation: { localState: 'succeeded', final: true } });
    expect(docs.slice(0, -1).every((d) => d.event === 'update')).toBe(true);
    const progress = docs.map((d) => d.operation?.remote.progress ?? null).filter((p): p is number => p !== null);
    expect(progress.at(-1)).toBe(1);
    // Progress only ever moves forward in what the operator sees.
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const status = await cli(['status', request.operationId, '--json']);
    expect(status.code).toBe(EXIT.ok);
    expect(statusDoc.parse(status.docs[0])).toMatchObject({
      operation: { localState: 'succeeded', final: true, result: { validation: 'valid' } },
      execution: { executionStatus: 'COMPLETED', localState: 'succeeded', failure: null },
      recordError: null,
      final: true,
    });
    // The record's transition tail, through the client's history query (M3): it ends where the operation ended.
    const history = await h.client.history(request.operationId);
    expect(history.at(-1)?.body).toMatchObject({ kind: 'transition', to: 'succeeded' });
  });

  it('E2, A2: watch stops at an escalation (exit 7); list and decide show it; only offered options are accepted; the extension finishes it', async () => {
    const request = h.request('rest', { script: 'review_then_done' });
    await cli(startArgs(request));
    const watched = await cli(['watch', request.operationId, '--interval', '20ms']);
    expect(watched.code).toBe(EXIT.needsDecision);
    expect(watched.stdout.trim().split('\n').at(-1)).toBe(
      `operation ${request.operationId} escalated (unknown_state): asyncjob decide ${request.operationId}`,
    );

    const status = await cli(['status', request.operationId, '--json']);
    expect(status.code).toBe(EXIT.needsDecision);
    expect(statusDoc.parse(status.docs[0]).operation?.escalation?.reason).toBe('unknown_state');

    await expect
      .poll(
        async () =>
          listDoc
            .parse((await cli(['list', '--escalated', '--reason', 'unknown_state', '--json'])).docs[0])
            .escalated?.map((e) => e.operationId),
        { timeout: 15_000, interval: 200 },
      )
      .toContain(request.operationId);

    const shown = await cli(['decide', request.operationId, '--json']);
    const show = decideDoc.parse(shown.docs[0]);
    if (show.action !== 'show' || !show.escalation) throw new Error('expected an open escalation');
    expect(show.escalation.text).toContain('Stopped because: unknown_state');
    const extend = show.escalation.options.find((o) => o.option === 'extend') as
      { extendMs: number; extraStatusRequests: number } | undefined;
    expect(extend).toBeDefined();

    const notOffered = await cli([
      'decide',
      request.operationId,
      '--option',
      'retry_collect',
      '--by',
      'bob',
      '--reason',
      'try',
      '--json',
    ]);
    expect(notOffered.code).toBe(EXIT.refused);
    expect(errorDoc.parse(notOffered.docs[0]).code).toBe('ASYNCJOB_ERR_OPTION_NOT_OFFERED');

    const decided = await cli([
      'decide',
      request.operationId,
      '--option',
      'extend',
      '--extend',
      `${extend!.extendMs}ms`,
      '--checks',
      String(extend!.extraStatusRequests),
      '--by',
      'bob@example.com',
      '--reason',
      'reviewed in the provider console',
      '--json',
    ]);
    expect(decided.stderr).toBe('');
    expect(decided.code).toBe(EXIT.ok);
    expect(decideDoc.parse(decided.docs[0])).toMatchObject({ action: 'decided', option: 'extend', accepted: true });

    const finished = await cli([...startArgs(request), '--wait', '--json']);
    expect(startDoc.parse(finished.docs[0])).toMatchObject({ joined: true, summary: { localState: 'succeeded' } });
    expect(finished.code).toBe(EXIT.ok);
  });

  it('X1: cancel --json records the intent through the update; a second cancel is refused by the workflow (exit 3)', async () => {
    const request = h.request('rest', { script: 'forever' });
    await cli(startArgs(request));
    await expect
      .poll(async () => (await h.client.get(request.operationId)).localState, { timeout: 20_000, interval: 50 })
      .toBeOneOf(['accepted', 'observing']);
    const cancelled = await cli([
      'cancel',
      request.operationId,
      '--by',
      'alice',
      '--reason',
      'no longer needed',
      '--json',
    ]);
    expect(cancelled.stderr).toBe('');
    expect(cancelDoc.parse(cancelled.docs[0])).toMatchObject({ accepted: true, localState: 'cancel_requested' });
    const twice = await cli(['cancel', request.operationId, '--by', 'alice', '--reason', 'again', '--json']);
    expect(twice.code).toBe(EXIT.refused);
    expect(errorDoc.parse(twice.docs[0]).code).toMatch(/^ASYNCJOB_ERR_CANCEL_/);
    const end = await cli(['watch', request.operationId, '--interval', '20ms', '--json']);
    expect(watchDoc.parse(end.docs.at(-1))).toMatchObject({
      event: 'end',
      operation: { cancel: { requestedBy: 'alice' } },
    });
  });

  it('status of an unknown operation exits 4 with asyncjob.error/v1', async () => {
    const missing = await cli(['status', 'no-such-operation-x', '--json']);
    expect(missing.code).toBe(EXIT.notFound);
    expect(errorDoc.parse(missing.docs[0])).toMatchObject({ code: 'ASYNCJOB_ERR_NOT_FOUND', exitCode: 4 });
    expect(missing.stderr).toBe('asyncjob: no operation no-such-operation-x\n');
  });

  it('start refuses an invalid request naming every bad field (exit 2), and starts nothing', async () => {
    const request = h.request('rest', { script: 'forever' });
    const bad = await cli([
      ...startArgs({ ...request, provider: 'bad provider', startedBy: 'x'.repeat(300) }),
      '--json',
    ]);
    expect(bad.code).toBe(EXIT.usage);
    const doc = errorDoc.parse(bad.docs[0]);
    expect(doc.code).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    expect(doc.issues?.map((i) => i.path)).toEqual(expect.arrayContaining(['provider', 'startedBy']));
    expect((await cli(['status', request.operationId])).code).toBe(EXIT.notFound);
  });
});
