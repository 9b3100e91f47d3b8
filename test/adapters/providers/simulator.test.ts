/**
 * The presets against the real simulator on loopback: every request is built by the adapter, sent with plain
 * undici (the bearer token added here, as the HTTP layer would), and every answer interpreted by the adapter.
 * This proves the presets describe the dialects the simulator actually speaks.
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adapterFromContract,
  loadProviderContract,
  type ProviderAdapter,
  type ProviderAnswer,
  type ProviderRequest,
  type BuildResult,
} from '../../../src/adapters/providers';
import { observationSchema, type Observation } from '../../../src/core/observation';
import { startSimulator, type Simulator } from '../../../src/simulator';

const TOKEN = 'sim-adapter-token-0123456789';
const DIALECTS = ['rest', 'lro', 'operation-location'] as const;

interface Sent {
  answer: ProviderAnswer;
  bytes: Buffer;
}

async function send(built: BuildResult, extraHeaders: Record<string, string> = {}): Promise<Sent> {
  if (built.kind !== 'request') throw new Error(`refused: ${built.problem}`);
  const r: ProviderRequest = built.request;
  const res = await request(r.url, {
    method: r.method as 'GET',
    headers: { ...r.headers, authorization: `Bearer ${TOKEN}`, ...extraHeaders },
    body: r.json === undefined ? undefined : JSON.stringify(r.json),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  const answer: ProviderAnswer = { status: res.statusCode, headers, receivedAtMs: Date.now() };
  const text = bytes.toString('utf8');
  if (text !== '') {
    try {
      answer.bodyJson = JSON.parse(text) as unknown;
    } catch (error) {
      answer.bodyText = text;
      answer.bodyParseError = (error as Error).message;
    }
  }
  return { answer, bytes };
}

function valid(o: Observation): Observation {
  return observationSchema.parse(o);
}

describe.each(DIALECTS)('the %s preset against the simulator', (dialect) => {
  let sim: Simulator;
  let adapter: ProviderAdapter;

  beforeAll(async () => {
    sim = await startSimulator({
      dialect,
      token: TOKEN,
      scenario: {
        scripts: {
          default: {
            steps: [
              { state: 'queued', polls: 1 },
              { state: 'running', polls: 1, progress: 50 },
              { state: 'succeeded' },
            ],
            result: { kind: 'json', body: { rows: [1, 2, 3] } },
          },
          slow: { steps: [{ state: 'running', durationMs: 600_000 }, { state: 'succeeded' }] },
          review: { steps: [{ state: 'manual_review' }] },
        },
      },
    });
    adapter = adapterFromContract(await loadProviderContract(dialect, { env: { ASYNCJOB_SIMULATOR_URL: sim.url } }));
  });
  afterAll(async () => sim.stop());

  async function create(
    token: string,
    payload: Record<string, unknown> = { report: 'q3' },
    operationId = `op-${token}`,
  ): Promise<Observation> {
    const built = adapter.buildCreateRequest({ payload, token, clientReference: operationId, nowMs: Date.now() });
    return valid(adapter.interpretCreate((await send(built)).answer));
  }

  async function poll(created: Observation, until: (o: Observation) => boolean): Promise<Observation[]> {
    const seen: Observation[] = [];
    for (let i = 0; i < 50; i++) {
      const built = adapter.buildStatusRequest({ jobId: created.remoteJobId, statusUrl: created.statusUrl });
      const o = valid(adapter.interpretStatus((await send(built)).answer, { jobId: created.remoteJobId }));
      seen.push(o);
      if (until(o)) return seen;
    }
    throw new Error(`no end after 50 reads: ${JSON.stringify(seen.at(-1))}`);
  }

  it('C2, P1, R1, R2: create, poll to success, collect and verify the result', async () => {
    const created = await create('tok-happy-0001');
    expect(created.parseProblem).toBeUndefined();
    expect(created.category).toBe('pending');
    expect(created.remoteJobId).toBeDefined();
    expect(sim.jobsByToken('tok-happy-0001')).toHaveLength(1);

    const seen = await poll(created, (o) => o.category !== 'pending');
    const last = seen.at(-1)!;
    expect(seen.every((o) => o.parseProblem === undefined)).toBe(true);
    expect(last.category).toBe('success');
    expect(seen.some((o) => o.progress === 0.5)).toBe(true);
    expect(last.resultReference?.url?.startsWith(sim.url)).toBe(true);

    const result = await send(
      adapter.buildResultRequest({ jobId: created.remoteJobId, resultUrl: last.resultReference?.url }),
    );
    expect(result.answer.status).toBe(200);
    const integrity = adapter.readResultIntegrity(result.answer.headers);
    expect(integrity.problems).toEqual([]);
    const expectedSha = last.resultReference?.sha256 ?? integrity.sha256;
    expect(expectedSha).toBe(createHash('sha256').update(result.bytes).digest('hex'));
    expect(result.answer.bodyJson).toEqual({ rows: [1, 2, 3] });
  });

  it('I1, I3: the same token creates one job, and the answer names the same job', async () => {
    const a = await create('tok-repeat-0001');
    const b = await create('tok-repeat-0001');
    expect(b.remoteJobId).toBe(a.remoteJobId);
    expect(sim.jobsByToken('tok-repeat-0001')).toHaveLength(1);
  });

  it('I2: the same token with a changed payload is a 4xx refusal, not a job', async () => {
    await create('tok-changed-0001', { report: 'q3' });
    const changed = await create('tok-changed-0001', { report: 'q4' });
    expect(changed.httpStatus).toBeGreaterThanOrEqual(400);
    expect(changed.httpStatus).toBeLessThan(500);
    expect(changed.category).toBeUndefined();
    expect(sim.jobsByToken('tok-changed-0001')).toHaveLength(1);
  });

  it('U2: reconciliation finds the job after a lost create answer', async () => {
    const created = await create('tok-lost-0001', { report: 'q3' }, 'op-lost-1');
    const built = adapter.buildReconcileRequest({
      token: 'tok-lost-0001',
      clientReference: 'op-lost-1',
      payload: { report: 'q3' },
      nowMs: Date.now(),
    });
    const { observation, matches } = adapter.interpretReconcile((await send(built)).answer, {
      clientReference: 'op-lost-1',
      token: 'tok-lost-0001',
    });
    valid(observation);
    expect(matches.map((m) => m.remoteJobId)).toEqual([created.remoteJobId]);
    expect(observation.remoteJobId).toBe(created.remoteJobId);
    expect(sim.jobsByToken('tok-lost-0001')).toHaveLength(1);
  });

  it('X1, X2: cancel is accepted and a later status read shows the cancellation', async () => {
    const created = await create('tok-cancel-0001', { report: 'q3', scenario: 'slow' });
    const cancel = valid(
      adapter.interpretCancel((await send(adapter.buildCancelRequest({ jobId: created.remoteJobId! }))).answer, {
        jobId: created.remoteJobId,
      }),
    );
    expect(cancel.errorCategory).toBeUndefined();
    const seen = await poll(created, (o) => o.category !== 'pending');
    expect(seen.at(-1)?.category).toBe('cancelled');
  });

  it.each([501, 405])(
    'X1: a cancel answered %i is the signal unsupported, and the job goes on to its own end',
    async (status) => {
      const token = `tok-nocancel-${status}`;
      const created = await create(token);
      const built = adapter.buildCancelRequest({ jobId: created.remoteJobId! });
      const { answer } = await send(built, { 'x-sim-fault': `http_error:status=${status}` });
      const cancel = valid(adapter.interpretCancel(answer, { jobId: created.remoteJobId }));
      expect(cancel).toMatchObject({ httpStatus: status, signal: 'unsupported', errorCategory: 'unsupported' });
      const seen = await poll(created, (o) => o.category !== 'pending');
      expect(seen.at(-1)?.category).toBe('success');
      expect(sim.jobsByToken(token)[0]?.cancelRequested).toBe(false);
    },
  );

  it('C2: a create answer stripped of its state word but still naming the job is accepted and polled to its end', async () => {
    const built = adapter.buildCreateRequest({
      payload: { report: 'q3' },
      token: 'tok-nostate-0001',
      clientReference: 'op-nostate',
      nowMs: Date.now(),
    });
    const { answer } = await send(built, { 'x-sim-fault': 'malformed:body=missing_fields' });
    const created = valid(adapter.interpretCreate(answer));
    if (dialect === 'lro') {
      // The lro answer names its job only in the body, and the fault removed that too: it proves nothing.
      expect(created.remoteJobId).toBeUndefined();
      expect(created.parseProblem).toContain('no job ID');
      return;
    }
    expect(created.parseProblem).toBeUndefined();
    expect(created.category).toBe('pending');
    expect(created.remoteJobId ?? created.statusUrl).toBeDefined();
    const seen = await poll(created, (o) => o.category !== 'pending');
    expect(seen.at(-1)?.category).toBe('success');
  });

  it('P1: a state outside the table is unknown', async () => {
    const created = await create('tok-review-0001', { report: 'q3', scenario: 'review' });
    const seen = await poll(created, (o) => o.category !== 'pending');
    expect(seen.at(-1)?.category).toBe('unknown');
  });

  it('H4: a wrong credential is auth_denied', async () => {
    const built = adapter.buildStatusRequest({ jobId: 'whatever', statusUrl: `${sim.url}/v1/jobs/whatever` });
    const { answer } = await send(built, { authorization: 'Bearer wrong' });
    expect(valid(adapter.interpretStatus(answer)).errorCategory).toBe('auth_denied');
  });

  it('C4: a foreign Location from the provider is never followed', async () => {
    const built = adapter.buildCreateRequest({
      payload: { report: 'q3' },
      token: 'tok-foreign-0001',
      clientReference: 'op-f',
      nowMs: Date.now(),
    });
    const { answer } = await send(built, { 'x-sim-fault': 'foreign_location' });
    const o = valid(adapter.interpretCreate(answer));
    if (dialect === 'lro') {
      // The lro create answer carries no URL: nothing to refuse.
      expect(o.errorCategory).toBeUndefined();
    } else {
      expect(o.errorCategory).toBe('foreign_origin');
      expect(o.statusUrl).toBeUndefined();
      expect(o.category).toBeUndefined();
    }
  });
});
