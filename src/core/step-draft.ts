/**
 * The step draft every step builds on (see `step.ts`): the step context and result types, and `Builder`, which collects the journal entries a step appends (transitions applied with their evidence, escalations raised one way).
 */
import { type ErrorCode } from './codes';
import { type DeciderPolicyInForce } from './decider-policy';
import { type AdapterCapabilities, type OpenEscalation, renderEscalation } from './escalation';
import { type EscalationReason, type JournalEntryBody } from './journal';
import { type Observation } from './observation';
import { type OperationRecord } from './operation';
import { raiseEscalation } from './raise-escalation';
import { withReconciliationFacts } from './option-executability';
import { recordObservation, type ControllerDecision } from './record-observation';
import { FINAL_STATES, type OperationEvent, transition } from './transitions';

/** How the adapter reconciles an ambiguous create (U2). */
export type ReconciliationMethod =
  'same_token_resend' | 'list_by_client_reference' | 'lookup_by_token' | 'lookup' | 'none';

/** What a step needs besides the record. */
export interface StepContext {
  /** Epoch ms. */
  nowMs: number;
  /** Uniform in [0, 1), for jitter (P2). */
  random: number;
  /** Who acts: `workflow`, `worker:<host>`, a human. */
  actor: string;
  capabilities: AdapterCapabilities;
  reconciliation: ReconciliationMethod;
  /** The decider policy the operation started under (D2); absent: none is set. */
  deciders?: DeciderPolicyInForce;
}

/** A journal entry produced by a step, before it is given its operation ID and ISO time by the store adapter. */
export interface StepEntry {
  sequence: number;
  atMs: number;
  actor: string;
  body: JournalEntryBody;
}

/** The result of every step. */
export interface StepResult {
  kind: 'step';
  record: OperationRecord;
  entries: StepEntry[];
}

/** A refusal of a caller's message, with a stable code (A2, X1). */
export interface StepRefusal {
  kind: 'refused';
  code: ErrorCode;
  message: string;
}

/** Whether a step's answer to a caller's message is a refusal (A2, X1). */
export function isRefusal(result: StepResult | StepRefusal): result is StepRefusal {
  return result.kind === 'refused';
}

/** Collects the entries appended since `before` (tails, plus escalation and decision entries kept aside). */
export class Builder {
  private readonly extra: StepEntry[] = [];
  constructor(
    readonly before: OperationRecord,
    public record: OperationRecord,
  ) {}

  /** Appends an entry that the record's tails do not keep (escalation, decision, artifact). */
  appendExtra(body: JournalEntryBody, atMs: number, actor: string): void {
    const sequence = this.record.journal.nextSequence;
    this.extra.push({ sequence, atMs, actor, body });
    this.record = { ...this.record, journal: { ...this.record.journal, nextSequence: sequence + 1 } };
  }

  /** Applies transition events in order; a refused one becomes an escalation rather than a silent skip (M1). */
  apply(events: readonly OperationEvent[], ctx: StepContext): void {
    for (const event of events) {
      const result = transition(this.record, event, ctx.nowMs);
      if (result.kind === 'applied') {
        this.record = result.record;
        if (event.type === 'escalate' && event.escalation) this.noteEscalation(event.escalation, ctx);
        continue;
      }
      if (result.code === 'ASYNCJOB_ERR_JOB_ID_CONFLICT') {
        this.escalate('job_id_conflict', result.message, ctx);
        return;
      }
      // A rule refused what the planner proposed: stop automation and let a human look (never guess).
      this.escalate('unknown_state', `${result.code}: ${result.message}`, ctx);
      return;
    }
  }

  /**
   * Raises an escalation from the current state (no-op when already escalated or final). `requestedBy`: the caller
   * who asked for it (an extension request), who may then not approve it (G2).
   */
  escalate(reason: EscalationReason, detail: string, ctx: StepContext, cause = 'escalate', requestedBy?: string): void {
    if (this.record.localState === 'escalated' || FINAL_STATES.includes(this.record.localState)) return;
    // E3: before a job exists the options are sending create again (when that cannot start a second job), close, look.
    const capabilities = withReconciliationFacts(ctx.capabilities, ctx.reconciliation);
    const raised = raiseEscalation(this.record, reason, detail.slice(0, 2000), ctx.nowMs, capabilities);
    const escalation = requestedBy === undefined ? raised : { ...raised, requestedBy };
    const result = transition(
      this.record,
      { type: 'escalate', actor: ctx.actor, cause, escalation, reason: detail.slice(0, 2000) },
      ctx.nowMs,
    );
    if (result.kind !== 'applied') throw new Error(`escalation refused: ${result.message}`);
    this.record = result.record;
    this.noteEscalation(escalation, ctx);
  }

  /** Journals the escalation; its entry's sequence becomes its ID, which a signed decision names (D3). */
  private noteEscalation(escalation: OpenEscalation, ctx: StepContext): void {
    const id = this.record.journal.nextSequence;
    if (this.record.escalation !== null)
      this.record = { ...this.record, escalation: { ...this.record.escalation, id } };
    this.appendExtra(
      {
        kind: 'escalation',
        reason: escalation.reason,
        message: renderEscalation(escalation).slice(0, 8000),
        options: escalation.options.map((o) => o.option),
        ...(escalation.requestedBy !== undefined ? { requestedBy: escalation.requestedBy } : {}),
      },
      ctx.nowMs,
      ctx.actor,
    );
  }

  /** The current local state (a method, so a narrowing made before an `apply` does not outlive it). */
  state(): OperationRecord['localState'] {
    return this.record.localState;
  }

  observe(observation: Observation, ctx: StepContext, decision: ControllerDecision): number {
    const { record, sequence } = recordObservation(this.record, observation, ctx.nowMs, ctx.actor, decision);
    this.record = record;
    return sequence;
  }

  /**
   * Records the outcome of the step in the observation of its outside call (T3): what was decided, and the next
   * call's time and its source when one is planned. Called by {@link result} for the call's observation.
   */
  private annotate(sequence: number): void {
    const r = this.record;
    const state = r.localState;
    const decision =
      state === 'escalated'
        ? 'escalate'
        : FINAL_STATES.includes(state)
          ? 'stop'
          : state === 'result_collecting'
            ? 'collect'
            : state === 'reconciliation' || state === 'create_unknown'
              ? 'reconcile'
              : r.schedule.nextPollAtMs !== undefined
                ? 'wait'
                : 'continue';
    const planned = decision === 'wait' || decision === 'reconcile' || decision === 'collect';
    const observations = r.journal.observations.map((o) => {
      if (o.sequence !== sequence || o.body.decision !== undefined) return o;
      const body = {
        ...o.body,
        decision,
        ...(planned && r.schedule.nextPollAtMs !== undefined
          ? { nextPollAt: new Date(r.schedule.nextPollAtMs).toISOString() }
          : {}),
        ...(planned && r.schedule.delaySource !== undefined ? { delaySource: r.schedule.delaySource } : {}),
        ...(r.schedule.hintRejected !== undefined ? { hintRejected: r.schedule.hintRejected } : {}),
      };
      return { ...o, body };
    });
    this.record = { ...r, journal: { ...r.journal, observations } };
  }

  /** The sequence of the step's outside-call observation, annotated with the decision at {@link result}. */
  callSequence: number | undefined;

  result(): StepResult {
    if (this.callSequence !== undefined) this.annotate(this.callSequence);
    const from = this.before.journal.nextSequence;
    const entries: StepEntry[] = [
      ...this.record.journal.transitions.filter((t) => t.sequence >= from),
      ...this.record.journal.observations.filter((o) => o.sequence >= from),
      ...this.extra,
    ].sort((a, b) => a.sequence - b.sequence);
    return { kind: 'step', record: this.record, entries };
  }
}
