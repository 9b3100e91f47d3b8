/**
 * Status steps (P1-P8, B2, W1): the wake-up check that reserves a status request, the status answer, and a webhook hint.
 */
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { planAfterObservation, reserveStatusRequest, webhookMayBringReadForward } from './wait-planner';
import { type StepContext, type StepResult, Builder } from './step-draft';

/** The result of {@link onWake}. */
export type WakeResult =
  /** Send one status request now; the record holds the reservation (B2). */
  | { kind: 'read_status'; record: OperationRecord }
  /** Nothing to send yet. */
  | { kind: 'not_yet'; atMs: number }
  /** The wake-up check stopped automation (deadline or budget, P5, S3, S4); append the entries. */
  | { kind: 'stopped'; step: StepResult };

/**
 * On waking in a polling state (P5): the deadline first, then the budget, then the schedule; a status request
 * is reserved before it is sent (B2). Never more than one request per wake-up: no catch-up bursts.
 */
export function onWake(record: OperationRecord, ctx: StepContext): WakeResult {
  const reserved = reserveStatusRequest(record, ctx);
  if (reserved.kind === 'reserved') return { kind: 'read_status', record: reserved.record };
  if (reserved.kind === 'not_yet') return { kind: 'not_yet', atMs: reserved.atMs };
  const draft = new Builder(record, reserved.record);
  draft.apply(reserved.events, ctx);
  return { kind: 'stopped', step: draft.result() };
}

/** After a status read (P1-P8, H1-H5, S1-S5, X2): the planner's decision, recorded with the observation (T3). */
export function afterStatus(record: OperationRecord, observation: Observation, ctx: StepContext): StepResult {
  const plan = planAfterObservation(record, observation, ctx);
  const draft = new Builder(record, plan.record);
  draft.apply(plan.events, ctx);
  return draft.result();
}

/**
 * A webhook hint (W1): recorded as an observation that changes no remote fact (not even the job IDs or the last
 * HTTP exchange: only a status read does), and, in a polling state, the next status read is moved to now so the
 * final status read happens early. Never a success on its own. It never overrides a provider's Retry-After (a
 * minimum wait, P3), never wakes after the deadline, and a hint naming another job wakes nothing.
 */
export function applyWebhookHint(
  record: OperationRecord,
  hint: { eventId: string; remoteJobId?: string; state?: string; receivedAtMs: number; receivedAt?: string },
  ctx: StepContext,
): StepResult {
  const draft = new Builder(record, record);
  const polling =
    record.localState === 'accepted' || record.localState === 'observing' || record.localState === 'cancelling';
  const ourJob = hint.remoteJobId === undefined || hint.remoteJobId === record.jobId;
  const confirmed = ourJob && statusReadSentSince(record, hint.receivedAt);
  const observation: Observation = {
    action: 'webhook',
    transport: 'response',
    signal: 'ok',
    receivedAtMs: hint.receivedAtMs,
    ...(hint.remoteJobId !== undefined ? { remoteJobId: hint.remoteJobId } : {}),
    ...(hint.state !== undefined ? { remoteState: hint.state } : {}),
  };
  const wakeNow = polling && ourJob && !confirmed && webhookMayBringReadForward(record, ctx.nowMs);
  const why = !ourJob
    ? ` for another job than ${record.jobId ?? '(none yet)'}: ignored`
    : confirmed
      ? ', already confirmed by a status read sent after it arrived'
      : wakeNow
        ? ', confirmed by a status read'
        : '';
  draft.observe(observation, ctx, {
    decision: wakeNow ? 'read_status_now' : 'noted',
    note: `webhook ${hint.eventId.slice(0, 200)}: a hint${why} (W1)`,
    ...(wakeNow ? { nextPollAtMs: ctx.nowMs, delaySource: 'webhook_hint' } : {}),
  });
  // W1, M2: a webhook is not a provider answer to us; the remote facts stay as the last status read left them.
  draft.record = { ...draft.record, remote: record.remote };
  if (wakeNow) draft.record = { ...draft.record, schedule: { nextPollAtMs: ctx.nowMs, delaySource: 'webhook_hint' } };
  return draft.result();
}

/**
 * Whether the last status read was sent at or after `receivedAt` (the receiver's ISO time): then it already
 * confirms the webhook (a status-polling activity in the receiver's process read at once, `core/poll-loop.ts`) and
 * a second read for it would be a wasted request. Without a receiver time, false.
 */
function statusReadSentSince(record: OperationRecord, receivedAt: string | undefined): boolean {
  const heardAtMs = receivedAt === undefined ? Number.NaN : Date.parse(receivedAt);
  if (Number.isNaN(heardAtMs)) return false;
  const reads = record.journal.observations.filter(
    (entry) => entry.body.action === 'status' && entry.body.transport !== 'refused',
  );
  const last = reads[reads.length - 1];
  // An observation's time is its step's, taken just before the request was sent.
  return last !== undefined && last.atMs >= heardAtMs;
}
