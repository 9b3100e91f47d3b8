/**
 * The context a dialect handler gets for one request: the job, the link base, job creation with idempotency
 * (repeat or conflict by body fingerprint), and the result payload with what is advertised about it (where the
 * `result_mismatch` fault makes the two disagree on purpose).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json';
import type { Advertised, CreateOutcome, DialectContext } from './dialects/types';
import type { Fault } from './faults';
import type { SimJob } from './jobs';
import type { PayloadCache } from './payloads';
import { scriptByName } from './scenario';
import type { SimulatorState } from './state';

/** The context for one request at `nowMs`; `ctx.job` becomes the created or repeated job on create. */
export function dialectContext(
  state: SimulatorState,
  nowMs: number,
  fault: Fault | undefined,
  job: SimJob | undefined,
  scriptName: string,
): DialectContext {
  const ctx: DialectContext = {
    nowMs,
    jobs: state.jobs,
    fault,
    job,
    linkBase: fault?.kind === 'foreign_location' ? state.foreignBaseUrl() : state.url,
    createOrRepeat: (token, body): CreateOutcome => {
      const outcome = createOrRepeat(state, { nowMs, fault, scriptName, token, body });
      ctx.job = outcome.job;
      return outcome;
    },
    payloadOf: (payloadJob) => payloadWithAdvertised(state.payloads, payloadJob, fault),
  };
  return ctx;
}

/** Finds the job of a known token (same body: repeat; changed body: conflict) or creates one. */
function createOrRepeat(
  state: SimulatorState,
  request: { nowMs: number; fault: Fault | undefined; scriptName: string; token: string | undefined; body: unknown },
): CreateOutcome {
  const { nowMs, fault, scriptName, token, body } = request;
  const fingerprint = canonicalJson(body ?? null);
  if (token !== undefined && fault?.kind !== 'different_job_id') {
    const existing = state.jobs.byIdempotencyToken(token)[0];
    if (existing) {
      state.jobs.advance(existing, nowMs);
      return { kind: existing.fingerprint === fingerprint ? 'repeat' : 'conflict', job: existing };
    }
  }
  const created = state.jobs.create({
    id: state.dialect.newJobId(state.random.hex(32)),
    token,
    fingerprint,
    payload: body,
    scriptName,
    script: scriptByName(state.scenario, scriptName),
    nowMs,
  });
  return { kind: 'created', job: created };
}

/** The job's rendered payload, the bytes served and the integrity data advertised (mismatched on purpose). */
function payloadWithAdvertised(
  payloads: PayloadCache,
  job: SimJob,
  fault: Fault | undefined,
): ReturnType<DialectContext['payloadOf']> {
  const rendered = payloads.get(job.script);
  const advertised: Advertised = {
    contentType: rendered.contentType,
    sizeBytes: rendered.sizeBytes,
    sha256Hex: rendered.sha256Hex,
    sha256Base64: rendered.sha256Base64,
    recordCount: rendered.recordCount,
  };
  let served = rendered.bytes;
  if (fault?.kind === 'result_mismatch') {
    if (fault.field === 'checksum') {
      const wrong = createHash('sha256').update(rendered.bytes).update('mismatch').digest();
      advertised.sha256Hex = wrong.toString('hex');
      advertised.sha256Base64 = wrong.toString('base64');
    } else if (fault.field === 'count') {
      advertised.recordCount = (rendered.recordCount ?? 0) + 1;
    } else {
      served = Buffer.concat([rendered.bytes, Buffer.from('\n')]);
    }
  }
  return { served, rendered, advertised };
}
