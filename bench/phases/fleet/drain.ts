/**
 * What a rate-limited herd's requests were beyond its plan, and how it ended: so a peak / mean that a slow end
 * lowered says why. A herd's mean is taken from its first request to its last, so requests that trickle in after
 * the pace ended (an operation's call failed and planned again, a late read) stretch it; these figures name them.
 */
import type { RequestRecord } from '../../../src/simulator';
import { perSecondBuckets, round } from '../../lib/stats';

/** One request after the pace ended. */
interface DrainRequest {
  /** Seconds after the herd's first request. */
  atSeconds: number;
  action: string;
  /** The answer's status; absent when the connection ended without one. */
  status?: number;
  /** Seconds after the herd's first request at which this request's job was first seen (its create). */
  jobSeenAtSeconds?: number;
}

/** The herd's requests against its plan, and its end. */
export interface HerdAccount {
  /** A create, the script's status reads and a collect per operation. */
  plannedRequests: number;
  /** Requests per action beyond the plan's (negative: fewer). Empty when the herd made exactly its plan. */
  beyondPlan: Record<string, number>;
  /** Answers other than 2xx, by status (`none`: the connection ended without one). */
  notSucceeded: Record<string, number>;
  /** The last second in which requests came at least at half the limit, seconds after the first request. */
  paceEndedAtSeconds: number;
  /** The requests after that second. */
  afterPace: DrainRequest[];
}

/** Requests per action beyond `planned` (negative: fewer), and answers other than 2xx by status. Pure. */
function againstPlan(
  records: readonly RequestRecord[],
  planned: Record<string, number>,
): Pick<HerdAccount, 'beyondPlan' | 'notSucceeded'> {
  const made: Record<string, number> = {};
  const notSucceeded: Record<string, number> = {};
  for (const r of records) {
    made[r.action] = (made[r.action] ?? 0) + 1;
    if (r.status === undefined || r.status < 200 || r.status > 299) {
      const key = r.status === undefined ? 'none' : String(r.status);
      notSucceeded[key] = (notSucceeded[key] ?? 0) + 1;
    }
  }
  const beyondPlan: Record<string, number> = {};
  for (const action of new Set([...Object.keys(planned), ...Object.keys(made)])) {
    const extra = (made[action] ?? 0) - (planned[action] ?? 0);
    if (extra !== 0) beyondPlan[action] = extra;
  }
  return { beyondPlan, notSucceeded };
}

/** When the pace ended (the last second at half `limit` or more) and the requests after it. Pure. */
function afterPaceOf(
  records: readonly RequestRecord[],
  limit: number,
): Pick<HerdAccount, 'paceEndedAtSeconds' | 'afterPace'> {
  const sorted = [...records].sort((a, b) => a.atMs - b.atMs);
  const first = sorted[0]?.atMs ?? 0;
  const second = (atMs: number): number => Math.floor((atMs - first) / 1000);
  const buckets = perSecondBuckets(sorted.map((r) => r.atMs));
  let paceEnded = buckets.length - 1;
  while (paceEnded > 0 && buckets[paceEnded]! < limit / 2) paceEnded--;
  const jobSeen = new Map<string, number>();
  for (const r of sorted) if (r.jobId !== undefined && !jobSeen.has(r.jobId)) jobSeen.set(r.jobId, r.atMs);
  const seconds = (atMs: number): number => round((atMs - first) / 1000, 2);
  const afterPace = sorted
    .filter((r) => second(r.atMs) > paceEnded)
    .map((r) => {
      const seen = r.jobId === undefined ? undefined : jobSeen.get(r.jobId);
      return {
        atSeconds: seconds(r.atMs),
        action: r.action,
        ...(r.status !== undefined ? { status: r.status } : {}),
        ...(seen !== undefined ? { jobSeenAtSeconds: seconds(seen) } : {}),
      };
    });
  return { paceEndedAtSeconds: paceEnded + 1, afterPace };
}

/**
 * The account of a herd of `operations` operations of `statusReads` reads each, limited to `limit` requests a
 * second, from its simulator's request log. Pure.
 */
export function herdAccount(
  records: readonly RequestRecord[],
  operations: number,
  statusReads: number,
  limit: number,
): HerdAccount {
  const planned = { create: operations, status: operations * statusReads, result: operations };
  return {
    plannedRequests: planned.create + planned.status + planned.result,
    ...againstPlan(records, planned),
    ...afterPaceOf(records, limit),
  };
}

/** The requests after the pace that a sentence names (the result lists them all). */
const SHOWN = 8;

/** The account in a sentence, for the target's conditions and the report. */
export function describeAccount(a: HerdAccount): string {
  const beyond = Object.entries(a.beyondPlan).map(([action, n]) => `${n > 0 ? '+' : ''}${n} ${action}`);
  const failed = Object.entries(a.notSucceeded).map(([status, n]) => `${n} answered ${status}`);
  const after =
    a.afterPace.length === 0
      ? 'none after the pace ended'
      : `${a.afterPace.length} after the pace ended at ${a.paceEndedAtSeconds} s (${a.afterPace
          .slice(0, SHOWN)
          .map((r) => `${r.action} at ${r.atSeconds} s`)
          .join(', ')}${a.afterPace.length > SHOWN ? ', ...' : ''})`;
  return `requests against the plan of ${a.plannedRequests}: ${beyond.length === 0 ? 'as planned' : beyond.join(', ')}${failed.length === 0 ? '' : `; ${failed.join(', ')}`}; ${after}`;
}
