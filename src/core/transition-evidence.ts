/**
 * The evidence each arrow of the transition table needs (M1), checked against an event: what makes a create
 * answer an acceptance, a status answer a success or failure, a decision valid. Pure.
 */
import { openEscalationSchema, validateDecision, decisionTarget } from './escalation';
import { type LocalState, actorSchema } from './journal';
import { locatesResult, namesJob, type Observation } from './observation';
import { type OperationRecord } from './operation';
import { type EvidenceKind, type OperationEvent, type TransitionRule } from './transitions';

const is2xx = (o: Observation | undefined): o is Observation =>
  o !== undefined &&
  o.transport === 'response' &&
  o.httpStatus !== undefined &&
  o.httpStatus >= 200 &&
  o.httpStatus < 300 &&
  o.parseProblem === undefined;

function successEvidence(record: OperationRecord, o: Observation | undefined): boolean {
  if (
    is2xx(o) &&
    (o.action === 'status' || o.action === 'create') &&
    o.category === 'success' &&
    locatesResult(o.resultReference)
  )
    return true;
  // Recorded by recordObservation from a 2xx status/create answer (M2): the same fact, seen earlier.
  return record.remote.category === 'success' && record.remote.resultReference !== undefined;
}

/** The state a decision leads to (for `decide` events), else undefined. */
export function targetOf(record: OperationRecord, event: OperationEvent): LocalState | null | undefined {
  if (event.type !== 'decide' || event.decision === undefined) return undefined;
  return decisionTarget(event.decision.option, record.cancel?.sentAtMs !== undefined);
}

/** Returns the evidence kinds `rule` needs that `event` (with `record` and `nowMs`) does not supply. */
export function evidenceMissing(
  rule: TransitionRule,
  record: OperationRecord,
  event: OperationEvent,
  nowMs: number,
): EvidenceKind[] {
  const o = event.observation;
  const missing: EvidenceKind[] = [];
  for (const kind of rule.evidence) {
    let ok: boolean;
    switch (kind) {
      case 'create_answer_with_job_id':
        ok = is2xx(o) && o.action === 'create' && namesJob(o);
        break;
      case 'sync_success':
        // The create's own answer, or the answer to repeating it (same token, or an idempotent PUT/DELETE, V4).
        ok =
          is2xx(o) &&
          (o.action === 'create' || o.action === 'reconcile') &&
          o.category === 'success' &&
          locatesResult(o.resultReference);
        break;
      case 'ambiguous_create':
        ok =
          o !== undefined &&
          o.action === 'create' &&
          (o.transport === 'ambiguous' ||
            o.transport === 'body_too_large' ||
            (o.transport === 'response' && o.httpStatus !== undefined && o.httpStatus >= 500));
        break;
      case 'reconcile_method':
        ok = event.reconcileMethod !== undefined;
        break;
      case 'reconciliation_match':
        ok = is2xx(o) && o.action === 'reconcile' && namesJob(o);
        break;
      case 'reconciliation_no_job':
        ok =
          o !== undefined &&
          o.action === 'reconcile' &&
          o.transport === 'response' &&
          (o.httpStatus === 404 || (is2xx(o) && !namesJob(o))) &&
          nowMs >= record.deadlines.createDeadlineMs;
        break;
      case 'status_answer':
        ok = is2xx(o) && o.action === 'status' && o.category !== undefined;
        break;
      case 'success_observation':
        ok = successEvidence(record, o);
        break;
      case 'validated_result':
        ok =
          event.result?.validation === 'valid' ||
          (record.result !== null && record.result.acceptedBy !== undefined && event.result === undefined);
        break;
      case 'failure_observation':
        // A provider's own "cancelled" with no cancel of ours is its failure to finish the job (provider_cancelled).
        ok =
          is2xx(o) &&
          o.action === 'status' &&
          (o.category === 'failure' ||
            o.category === 'expired' ||
            (o.category === 'cancelled' && record.cancel === null));
        break;
      case 'cancelled_observation':
        ok = is2xx(o) && o.action === 'status' && o.category === 'cancelled';
        break;
      case 'cancel_intent': {
        const c = event.cancelIntent;
        ok =
          c !== undefined &&
          actorSchema.safeParse(c.requestedBy).success &&
          c.reason.trim().length > 0 &&
          c.expectedEffect.trim().length > 0;
        break;
      }
      case 'cancel_answer':
        // The provider answered the one cancel call: accepted (2xx) or already final (409); polling tells how it ended (X2).
        ok =
          o !== undefined && o.action === 'cancel' && o.transport === 'response' && (o.httpStatus === 409 || is2xx(o));
        break;
      case 'result_deadline_passed':
        ok = nowMs >= record.deadlines.resultDeadlineMs;
        break;
      case 'cancel_deadline_passed':
        ok = record.deadlines.cancelDeadlineMs !== undefined && nowMs >= record.deadlines.cancelDeadlineMs;
        break;
      case 'collect_failure':
        ok = o !== undefined && o.action === 'collect' && !is2xx(o);
        break;
      case 'invalid_result':
        ok = event.result?.validation === 'invalid';
        break;
      case 'escalation':
        ok = event.escalation !== undefined && openEscalationSchema.safeParse(event.escalation).success;
        break;
      case 'decision': {
        ok =
          record.escalation !== null &&
          event.decision !== undefined &&
          validateDecision(record.escalation, event.decision, { nowMs }).kind === 'ok' &&
          targetOf(record, event) === rule.to &&
          (event.decision.option !== 'accept_result' || record.result !== null);
        break;
      }
      case 'resume_action': {
        const r = event.resume;
        ok =
          r !== undefined &&
          r.providerSupportsResume &&
          actorSchema.safeParse(r.approvedBy).success &&
          r.reason.trim().length > 0;
        break;
      }
    }
    if (!ok) missing.push(kind);
  }
  return missing;
}
