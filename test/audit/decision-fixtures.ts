/**
 * Operations with decisions, driven by the real core steps as the workflow drives them: started under a decider
 * policy (recorded whole in the intent), accepted by the provider, escalated, then decided through
 * `applyDecision` (signed with a decider's Ed25519 key, by the CLI, or unsigned through the Web UI's signal form),
 * a refused decision recorded by `recordRejectedDecision`. The journal and snapshot are what a worker would store.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { snapshotOf, toJournalEntry } from '../../src/activities/journal-writer';
import { type OperationStore } from '../../src/adapters/store/operation-store';
import { inForce, type DeciderPolicyInForce } from '../../src/core/decider-policy';
import { decisionBounds } from '../../src/core/decision-check';
import { keyIdOf, signDecision } from '../../src/core/decision-signature';
import { type Decision } from '../../src/core/escalation';
import { type EscalationReason, type JournalEntry } from '../../src/core/journal';
import { intentEntryOf, type OperationRecord } from '../../src/core/operation';
import {
  afterCreate,
  applyDecision,
  extensionRequestSchema,
  isRefusal,
  recordRejectedDecision,
  requestExtension,
  reserveCreateAttempt,
  type StepContext,
  type StepResult,
} from '../../src/core/step';
import { Builder } from '../../src/core/step-draft';
import { newRecord, observed, ONCALL_RULES, T0 } from '../core/helpers';

/** Alice's decider key (fixed seed: the same signatures every run). */
export const ALICE_SECRET = bytesToHex(ed25519.keygen(new Uint8Array(32).fill(7)).secretKey);
export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';

/**
 * The policy: the on-call group (alice, bob) may extend by up to an hour, keep bounds, close or look; only alice
 * may cancel at the provider, and that must be signed.
 */
const DECIDERS: DeciderPolicyInForce = inForce({
  deciders: [{ identity: ALICE, keys: [keyIdOf(ALICE_SECRET)] }],
  groups: { oncall: [ALICE, BOB] },
  rules: ONCALL_RULES,
  signatures: { options: ['cancel_at_provider'] },
  extensionRequests: { most: 3, withinMs: 3_600_000 },
});

const POLICY = { decisionDeadlineMs: 600_000, extensionMs: 900_000, extensionStatusRequests: 4 };

/** How a decision is sent: its transport, the secret key that signs it (unsigned without), and whether it is refused. */
export interface Sending {
  transport?: 'signal' | 'update';
  signWith?: string;
  refused?: boolean;
}

/** An operation as the store holds it: the record, every journal entry, and the clock. */
export class DecidedOperation {
  record: OperationRecord;
  readonly journal: JournalEntry[] = [];
  now = T0;

  constructor(
    readonly operationId: string,
    /** The policy it starts under; null: none. */
    readonly deciders: DeciderPolicyInForce | null = DECIDERS,
  ) {
    this.record = newRecord(POLICY, { operationId });
    this.push(intentEntryOf(this.record, undefined, deciders ?? undefined));
    for (const t of this.record.journal.transitions) this.push(t);
    const reserved = reserveCreateAttempt(this.record, this.ctx(T0 + 500));
    if (reserved.kind !== 'reserved') throw new Error('create not reserved');
    const created = observed({
      action: 'create',
      transport: 'response',
      httpStatus: 202,
      receivedAtMs: T0 + 1000,
      remoteJobId: `job_${operationId}`,
      statusUrl: `https://api.example.test/jobs/job_${operationId}`,
    });
    this.commit(afterCreate(reserved.record, created, this.ctx(T0 + 1000)));
  }

  ctx(nowMs = this.now, actor = 'workflow'): StepContext {
    return {
      nowMs,
      random: 0.5,
      actor,
      capabilities: { cancel: true, repeatableCollect: true },
      reconciliation: 'same_token_resend',
      ...(this.deciders !== null ? { deciders: this.deciders } : {}),
    };
  }

  private push(entry: Parameters<typeof toJournalEntry>[1]): void {
    this.journal.push(toJournalEntry(this.operationId, entry));
  }

  private commit(step: StepResult): void {
    this.record = step.record;
    for (const e of step.entries) this.push(e);
    if (this.journal.some((e, i) => e.sequence !== i + 1)) throw new Error('journal sequences not contiguous');
  }

  /** Raises `reason` as a step does, a minute on. */
  escalate(reason: EscalationReason = 'deadline_exceeded'): this {
    this.now += 60_000;
    const draft = new Builder(this.record, this.record);
    draft.escalate(reason, `fixture: ${reason}`, this.ctx());
    this.commit(draft.result());
    return this;
  }

  /** `requestedBy` asks for more time a minute on (G2, D4): it raises the escalation, or joins the open one. */
  request(requestedBy: string, reason: string): this {
    this.now += 60_000;
    const request = extensionRequestSchema.parse({ requestedBy, reason, extendMs: 600_000 });
    const step = requestExtension(this.record, request, this.ctx(this.now, requestedBy));
    if (isRefusal(step)) throw new Error(`extension request refused: ${step.message}`);
    this.commit(step);
    return this;
  }

  /** Sends `decision` a minute on; a refusal is recorded as the workflow records it. Returns its sequence. */
  decide(decision: Omit<Decision, 'signature'>, sending: Sending = {}): number {
    this.now += 60_000;
    const signature =
      sending.signWith === undefined
        ? undefined
        : signDecision(sending.signWith, {
            operationId: this.operationId,
            escalationId: this.record.escalation!.id!,
            option: decision.option,
            bounds: decisionBounds(decision),
            decider: decision.approvedBy,
            reason: decision.reason,
            signedAt: new Date(this.now).toISOString(),
          });
    const sent = { ...decision, ...(signature !== undefined ? { signature } : {}) };
    const sequence = this.record.journal.nextSequence;
    const ctx = this.ctx(this.now, decision.approvedBy);
    const transport = sending.transport ?? 'update';
    const step = applyDecision(this.record, sent, ctx, transport);
    if (isRefusal(step) !== (sending.refused === true))
      throw new Error(
        `decision ${isRefusal(step) ? `refused: ${step.message}` : 'accepted'}, not as the fixture expects`,
      );
    this.commit(isRefusal(step) ? recordRejectedDecision(this.record, sent, step, ctx, transport) : step);
    return sequence;
  }

  /** Writes the journal and the snapshot a worker would write. */
  async write(store: OperationStore): Promise<void> {
    await store.appendMany(this.journal);
    await store.putOperation(snapshotOf(this.record, this.now));
  }
}
