/**
 * "The front door", end to end with the CLI on a real dev server, worker and simulator: a bad request
 * or a provider no worker serves is refused before any workflow exists; a failed start never burns its
 * operation ID; every command on a failed operation says why it failed; `start --wait` returns on an escalation
 * (exit 7) within a second of it; a join with other settings is refused naming the fields; `list` filters by
 * state and provider.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { WORKFLOW_TYPE } from '../../src/client';
import { startHarness, type Harness } from '../workflows/harness';
import { errorDoc, listDoc, runOn, startArgs, startDoc, statusDoc, watchDoc } from './front-door-cli';

describe('the front door: asyncjob start, and every command on a failed operation', () => {
  let h: Harness;
  const cli = (argv: string[]) => runOn(h.client, argv);

  beforeAll(async () => {
    const scripts = {
      review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] },
      quick: { steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }] },
      forever: { steps: [{ state: 'running' }] },
    };
    h = await startHarness('front-door', { scenarios: { rest: { scripts } } as never });
  });
  afterAll(async () => h?.stop());

  it('a result deadline before the create deadline is refused with exit 2, the field named, and no workflow', async () => {
    const request = h.request('rest', {
      script: 'quick',
      createDeadline: { afterMs: 60_000 },
      resultDeadline: { afterMs: 30_000 },
    });
    const bad = await cli([...startArgs(request), '--json']);
    expect(bad.code).toBe(EXIT.usage);
    expect(errorDoc.parse(bad.docs[0])).toMatchObject({
      code: 'ASYNCJOB_ERR_INVALID_INPUT',
      issues: [{ path: 'resultDeadline', message: 'must not be before the create deadline' }],
    });
    expect((await cli(['status', request.operationId])).code).toBe(EXIT.notFound);
  });

  it('an unknown provider is refused with exit 2, the served providers named, and no workflow', async () => {
    // One operation of this file's provider, so the client can see it among recent operations (once visible).
    const seen = h.request('rest', { script: 'quick' });
    await cli(startArgs(seen));
    await expect
      .poll(async () => (await h.client.list({ provider: h.provider('rest') })).map((o) => o.operationId), {
        timeout: 15_000,
        interval: 100,
      })
      .toContain(seen.operationId);
    const request = { ...h.request('rest', { script: 'quick' }), provider: 'rest' };
    const refused = await cli([...startArgs(request), '--json']);
    expect(refused.code).toBe(EXIT.usage);
    const doc = errorDoc.parse(refused.docs[0]);
    expect(doc.code).toBe('ASYNCJOB_ERR_PROVIDER_UNSERVED');
    expect(doc.message).toContain(
      `no worker serves provider rest (nobody polled task queue ${h.taskQueue}-provider-rest recently)`,
    );
    expect(doc.message).toContain(h.provider('rest'));
    expect(doc.message).toContain('--allow-unserved-provider');
    expect((await cli(['status', request.operationId])).code).toBe(EXIT.notFound);
  });

  it('a start for an unknown provider forced with --allow-unserved-provider fails; every command says why; the corrected start succeeds', async () => {
    const corrected = h.request('rest', { script: 'quick' });
    const wrong = { ...corrected, provider: 'rest' };
    const forced = await cli([...startArgs(wrong), '--allow-unserved-provider', '--json']);
    expect(forced.code).toBe(EXIT.ok);
    const failedRun = startDoc.parse(forced.docs[0]).runId;
    await expect
      .poll(async () => (await h.client.describeOperation(wrong.operationId)).executionStatus, {
        timeout: 10_000,
        interval: 50,
      })
      .toBe('FAILED');

    const status = await cli(['status', wrong.operationId]);
    expect(status.code).toBe(EXIT.operationEndedBadly);
    expect(status.stdout).toMatch(/ {2}workflow: {2}FAILED, run /);
    expect(status.stdout).toContain(
      '  reason:    ASYNCJOB_ERR_PROVIDER_UNKNOWN: provider rest is not registered in this worker',
    );
    const statusJson = statusDoc.parse((await cli(['status', wrong.operationId, '--json'])).docs[0]);
    expect(statusJson).toMatchObject({
      final: true,
      execution: { executionStatus: 'FAILED', failure: { type: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN' } },
    });

    const cancel = await cli(['cancel', wrong.operationId, '--by', 'alice', '--reason', 'wrong provider', '--json']);
    expect(cancel.code).toBe(EXIT.refused);
    expect(errorDoc.parse(cancel.docs[0]).code).toBe('ASYNCJOB_ERR_OPERATION_FINAL');
    expect(cancel.stderr).toMatch(
      /has ended \(workflow FAILED: ASYNCJOB_ERR_PROVIDER_UNKNOWN: provider rest is not registered.*; state create_pending\)/,
    );
    const decide = await cli(['decide', wrong.operationId, '--json']);
    expect(decide.code).toBe(EXIT.refused);
    expect(errorDoc.parse(decide.docs[0]).code).toBe('ASYNCJOB_ERR_OPERATION_FINAL');
    expect(decide.stderr).not.toMatch(/did not register a handler/);
    const watch = await cli(['watch', wrong.operationId, '--json']);
    expect(watch.code).toBe(EXIT.operationEndedBadly);
    expect(watchDoc.parse(watch.docs.at(-1))).toMatchObject({
      event: 'end',
      operation: null,
      workflowStatus: 'FAILED',
      failure: { type: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN' },
    });

    // The ID is not burned: the corrected request starts a new run in place of the failed one.
    const again = await cli([...startArgs(corrected), '--wait']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(EXIT.ok);
    expect(again.stdout).toMatch(
      new RegExp(
        `^started operation ${corrected.operationId} again: its earlier run failed on its input \\(ASYNCJOB_ERR_PROVIDER_UNKNOWN: `,
      ),
    );
    expect(again.stdout).toContain(`operation ${corrected.operationId} ended: succeeded`);
    expect((await h.client.describeOperation(corrected.operationId)).runId).not.toBe(failedRun);
  });

  it('a run that failed on its input (started by an older client) is replaced by the corrected start', async () => {
    const corrected = h.request('rest', { script: 'quick' });
    const input = {
      request: { ...corrected, createDeadline: { afterMs: 60_000 }, resultDeadline: { afterMs: 1_000 } },
      idempotencyToken: randomBytes(32).toString('base64url'),
      traceId: randomBytes(16).toString('hex'),
    };
    await h.env.client.workflow.start(WORKFLOW_TYPE, {
      workflowId: corrected.operationId,
      taskQueue: h.taskQueue,
      args: [input],
    });
    await expect
      .poll(async () => (await h.client.describeOperation(corrected.operationId)).failure?.type, {
        timeout: 10_000,
        interval: 50,
      })
      .toBe('ASYNCJOB_ERR_INVALID_INPUT');
    const status = await cli(['status', corrected.operationId]);
    expect(status.stdout).toContain(
      '  reason:    ASYNCJOB_ERR_INVALID_INPUT: resultDeadline: must not be before the create deadline',
    );
    const again = await cli([...startArgs(corrected), '--json']);
    expect(again.code).toBe(EXIT.ok);
    expect(startDoc.parse(again.docs[0])).toMatchObject({
      joined: false,
      replaced: { type: 'ASYNCJOB_ERR_INVALID_INPUT' },
    });
    // Joining it afterwards is an ordinary join.
    expect(startDoc.parse((await cli([...startArgs(corrected), '--json'])).docs[0])).toMatchObject({
      joined: true,
      replaced: null,
    });
  });

  it('start --wait returns within a second of an escalation with exit 7, the escalation and the decide command; --until-final waits on', async () => {
    const request = h.request('rest', { script: 'review' });
    const waited = await cli([...startArgs(request), '--wait']);
    const returnedAt = Date.now();
    expect(waited.stderr).toBe('');
    expect(waited.code).toBe(EXIT.needsDecision);
    const record = await h.client.get(request.operationId);
    expect(record.localState).toBe('escalated');
    expect(returnedAt - record.escalation!.raisedAtMs).toBeLessThan(1_000);
    expect(waited.stdout).toContain(`operation ${request.operationId} needs a decision (unknown_state):`);
    expect(waited.stdout).toContain('Stopped because: unknown_state');
    expect(waited.stdout).toMatch(/--option extend --extend \S+ --checks \d+ --by WHO --reason TEXT/);
    expect(waited.stdout.trim().split('\n').at(-1)).toBe(
      `operation ${request.operationId} escalated (unknown_state): asyncjob decide ${request.operationId}`,
    );

    // --until-final waits through the escalation: here until its decision deadline closes it.
    const closing = h.request('rest', {
      script: 'review',
      policy: { baseDelayMs: 20, maxDelayMs: 200, decisionDeadlineMs: 1_500 },
    });
    const started = Date.now();
    const final = await cli([...startArgs(closing), '--wait', '--until-final', '--json']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(startDoc.parse(final.docs[0]).summary).not.toBeNull();
    expect((await h.client.describeOperation(closing.operationId)).executionStatus).toBe('COMPLETED');
  });

  it('a join with another policy, deadline or starter is refused with exit 3 naming each field; nothing changes', async () => {
    const request = h.request('rest', { script: 'forever' });
    expect((await cli(startArgs(request))).code).toBe(EXIT.ok);
    const changed = {
      ...request,
      startedBy: 'service:someone-else',
      resultDeadline: { afterMs: 90_000 },
      policy: { ...request.policy, maxStatusRequests: 7 },
    };
    const refused = await cli([...startArgs(changed), '--json']);
    expect(refused.code).toBe(EXIT.refused);
    const doc = errorDoc.parse(refused.docs[0]);
    expect(doc.code).toBe('ASYNCJOB_ERR_JOIN_MISMATCH');
    expect(doc.message).toContain('startedBy is "service:test-suite", given "service:someone-else"');
    expect(doc.message).toContain('resultDeadline is {"afterMs":60000}, given {"afterMs":90000}');
    expect(doc.message).toContain('policy.maxStatusRequests is 100, given 7');
    expect((await h.client.get(request.operationId)).budgets.maxStatusRequests).toBe(100);
    expect(startDoc.parse((await cli([...startArgs(request), '--json'])).docs[0]).joined).toBe(true);
    // Clean-up of the never-ending job, whatever its state by now (a cancel is refused before the job is accepted).
    await h.env.client.workflow.getHandle(request.operationId).terminate('test clean-up');
  });

  it('list filters by state and provider', async () => {
    const request = h.request('rest', { script: 'quick' });
    await cli([...startArgs(request), '--wait']);
    await expect
      .poll(
        async () =>
          listDoc
            .parse((await cli(['list', '--state', 'succeeded', '--provider', h.provider('rest'), '--json'])).docs[0])
            .operations.map((o) => o.operationId),
        { timeout: 15_000, interval: 200 },
      )
      .toContain(request.operationId);
    const other = listDoc.parse((await cli(['list', '--provider', h.provider('lro'), '--json'])).docs[0]);
    expect(other.operations.map((o) => o.operationId)).not.toContain(request.operationId);
    const text = await cli(['list', '--state', 'succeeded', '--provider', h.provider('rest')]);
    expect(text.stdout.split('\n')[0]).toMatch(
      /^OPERATION\s+STATE\s+REASON\s+PROVIDER\s+PROVIDER JOB\s+WORKFLOW\s+STARTED$/,
    );
  });
});
