/**
 * The story of an operation (T3): its journal rendered as the seeds' timeline, one line per entry, times in UTC:
 *
 *   10:18:02 create_pending -> accepted (job job_7ad2) by workflow
 *   10:20:31 received 503, Retry-After 120, next poll 10:22:31 from provider guidance
 *   10:25:00 escalated: deadline_exceeded; options: extend, cancel_at_provider, close
 *   10:31:12 decision extend by alice@example.com, accepted: the customer agreed to wait; bounds extendMs=900000;
 *            route cli, rule oncall-may-extend, signed, verified (key ed25519:…)
 *
 * and a JSON form with a stable, documented shape ({@link AuditShowJson}). Pure: no I/O, no clock.
 */
import { type ChainBreak } from '../adapters/store/chain';
import { type StoredEntry } from '../adapters/store/operation-store';
import { DELAY_SOURCE_PHRASES } from '../core/delay-sources';
import { type JournalEntry } from '../core/journal';
import { decisionContext, decisionProofText, signatureStatus, type DecisionContext } from './decision-proof';

/** One rendered line: the entry's identity plus its text (without the time). */
export interface StoryLine {
  readonly sequence: number;
  readonly at: string;
  readonly actor: string;
  readonly kind: JournalEntry['body']['kind'];
  /** The line's text after the time, e.g. `received 503, Retry-After 120, next poll 10:22:31 from provider guidance`. */
  readonly text: string;
}

/**
 * The stable JSON shape of `asyncjob audit show ID --json` (schema `asyncjob.audit-show/v1`). Fields are only
 * ever added, never renamed or removed. `entries[].body` is the journal entry body exactly as recorded.
 */
export interface AuditShowJson {
  readonly schema: 'asyncjob.audit-show/v1';
  readonly operationId: string;
  /** The chain check of this operation: intact, or its first broken link. */
  readonly chain: { readonly intact: boolean; readonly break: ChainBreak | null };
  readonly entries: ReadonlyArray<{
    readonly sequence: number;
    readonly at: string;
    readonly actor: string;
    readonly kind: JournalEntry['body']['kind'];
    readonly text: string;
    readonly prevHash: string;
    readonly hash: string;
    readonly body: JournalEntry['body'];
    /** False for an entry the audit could not verify (at or after a break, or signed by a key not configured). */
    readonly verified: boolean;
    /**
     * For a decision entry carrying a decider's signature (D3, D5): whether it verifies with the decider's keys in
     * the decider policy the intent records, over the decision as recorded.
     */
    readonly signatureVerified?: boolean;
  }>;
}

/**
 * Which entries of a story the audit could not verify: every entry from `from` on, for `why` (a break's problem,
 * or a key that is not configured). Such entries are shown as unverified, never as history.
 */
export interface Unverified {
  readonly from: number;
  readonly why: string;
}

/** `HH:MM:SS` of an instant, or `YYYY-MM-DD HH:MM:SS` when it falls on another UTC day than `reference`. */
export function clockTime(instant: string, reference?: string): string {
  const day = instant.slice(0, 10);
  const time = instant.slice(11, 19);
  return reference === undefined || reference.slice(0, 10) === day ? time : `${day} ${time}`;
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

function observationText(entry: JournalEntry, b: Extract<JournalEntry['body'], { kind: 'observation' }>): string {
  const parts: string[] = [];
  const prefix = b.action === 'status' ? '' : `${b.action}: `;
  switch (b.transport) {
    case 'response':
      parts.push(`${prefix}received ${b.httpStatus ?? 'a response'}`);
      break;
    case 'not_sent':
      parts.push(`${prefix}request not sent`);
      break;
    case 'ambiguous':
      // A failed activity (a lost worker) proves only the reservation: whether the request left is unknown.
      parts.push(
        b.errorCategory === 'activity_failed'
          ? `${prefix}request reserved, then the worker was lost before an answer (it may never have been sent)`
          : `${prefix}sent, no complete answer (the provider may have acted)`,
      );
      break;
    case 'body_too_large':
      parts.push(`${prefix}received ${b.httpStatus ?? 'a response'} with a body over the size limit`);
      break;
    case 'refused':
      parts.push(`${prefix}refused before sending`);
      break;
  }
  if (b.errorCategory !== undefined) parts.push(b.errorCategory);
  if (b.credentialRenewed !== undefined) {
    const first = b.credentialRenewed.providerRequestId;
    parts.push(
      `resent once after a ${b.credentialRenewed.httpStatus} with a renewed credential${first === undefined ? '' : ` (first request ${first})`}`,
    );
  }
  const retryAfter = header(b.headers, 'retry-after');
  if (retryAfter !== undefined) parts.push(`Retry-After ${retryAfter}`);
  if (b.remoteJobId !== undefined && b.action !== 'status') parts.push(`job ${b.remoteJobId}`);
  if (b.pollUrl !== undefined)
    parts.push(`${b.action === 'status' ? 'polling moves to' : 'poll URL'} ${shortUrl(b.pollUrl)}`);
  if (b.providerError !== undefined)
    parts.push(
      `provider error ${[b.providerError.code, b.providerError.message].filter((p) => p !== undefined).join(': ')}`,
    );
  if (b.remoteState !== undefined) {
    parts.push(`state ${b.remoteState}${b.progress !== undefined ? ` (${Math.round(b.progress * 100)}%)` : ''}`);
  } else if (b.progress !== undefined) {
    parts.push(`progress ${Math.round(b.progress * 100)}%`);
  }
  if (b.hintRejected !== undefined) parts.push(`hint rejected: ${b.hintRejected}`);
  if (b.nextPollAt !== undefined) {
    const source = b.delaySource === undefined ? '' : ` ${DELAY_SOURCE_PHRASES[b.delaySource]}`;
    parts.push(`next poll ${clockTime(b.nextPollAt, entry.at)}${source}`);
  } else if (b.decision !== undefined) {
    parts.push(`decision ${b.decision}`);
  }
  if (b.statusRequestsUsed !== undefined) {
    parts.push(
      `${b.statusRequestsUsed}${b.statusRequestsAllowed !== undefined ? ` of ${b.statusRequestsAllowed}` : ''} status requests used`,
    );
  }
  if (b.note !== undefined) parts.push(b.note);
  return parts.join(', ');
}

/** A URL for a story line: whole up to 200 characters, else its start and end (display only; never requested). */
function shortUrl(url: string): string {
  return url.length <= 200 ? url : `${url.slice(0, 120)}…${url.slice(-60)}`;
}

/**
 * The text of one entry's story line (without the time). A decision's line ends with how it was proven (D5);
 * `context` (from {@link decisionContext} over the operation's journal) lets its signature be verified. Pure.
 */
export function storyText(entry: JournalEntry, context?: DecisionContext): string {
  const b = entry.body;
  switch (b.kind) {
    case 'intent':
      return (
        `intent recorded by ${entry.actor}: create at ${b.provider}, authorised by ${b.authorisedBy}, started by ${b.startedBy}, ` +
        `trace ${b.traceId}, create deadline ${clockTime(b.createDeadlineAt, entry.at)}, result deadline ${clockTime(b.resultDeadlineAt, entry.at)}`
      );
    case 'transition': {
      const job = b.remoteJobId === undefined ? '' : ` (job ${b.remoteJobId})`;
      const reason = b.reason === undefined ? '' : `: ${b.reason}`;
      return `${b.from ?? 'start'} -> ${b.to}${job} by ${entry.actor}${reason}`;
    }
    case 'observation':
      return observationText(entry, b);
    case 'escalation':
      return `escalated: ${b.reason}; options: ${b.options.join(', ')}`;
    case 'escalation_joined':
      return `joined escalation ${b.escalation ?? '(the open one)'}: ${b.request}`;
    case 'decision': {
      const outcome = b.accepted
        ? 'accepted'
        : `rejected${b.rejectionReason === undefined ? '' : ` (${b.rejectionReason})`}`;
      const bounds =
        b.bounds === undefined || Object.keys(b.bounds).length === 0
          ? ''
          : `; bounds ${Object.entries(b.bounds)
              .map(([k, v]) => `${k}=${String(v)}`)
              .join(', ')}`;
      const proof = decisionProofText({ ...entry, body: b }, context);
      return `decision ${b.decision} by ${b.approvedBy}, ${outcome}: ${b.reason}${bounds}${proof === '' ? '' : `; ${proof}`}`;
    }
    case 'artifact': {
      const facts = [`${b.sizeBytes} bytes`, `sha256 ${b.sha256.slice(0, 12)}`];
      if (b.contentType !== undefined) facts.push(b.contentType);
      if (b.recordCount !== undefined) facts.push(`${b.recordCount} records`);
      if (b.failedItems !== undefined && b.failedItems.length > 0) facts.push(`${b.failedItems.length} failed items`);
      const problems =
        b.validationProblems !== undefined && b.validationProblems.length > 0
          ? `: ${b.validationProblems.join('; ')}`
          : '';
      return `artifact ${b.location} (${facts.join(', ')}) ${b.validation.replace('_', ' ')}${problems}`;
    }
  }
}

/** Renders entries (in sequence order) as story lines. Pure. */
export function renderStory(entries: readonly JournalEntry[]): StoryLine[] {
  const context = decisionContext(entries);
  return entries.map((e) => ({
    sequence: e.sequence,
    at: e.at,
    actor: e.actor,
    kind: e.body.kind,
    text: storyText(e, context),
  }));
}

/**
 * The text form: a header naming the operation and the UTC day, one line per entry (`HH:MM:SS text`, with the
 * date when an entry falls on a later day), and a last line when the chain is broken. An entry the audit could not
 * verify (`unverified`) reads `HH:MM:SS UNVERIFIED: text`, and a line says why: it is what the database holds, not
 * history.
 */
export function formatStoryText(
  operationId: string,
  lines: readonly StoryLine[],
  chainBreak: ChainBreak | null,
  unverified: Unverified | null = null,
): string {
  const first = lines[0]?.at;
  const out = [`operation ${operationId}${first === undefined ? '' : ` (times UTC, ${first.slice(0, 10)})`}`];
  for (const line of lines) {
    const mark = unverified !== null && line.sequence >= unverified.from ? 'UNVERIFIED: ' : '';
    out.push(`${clockTime(line.at, first)} ${mark}${line.text}`);
  }
  if (unverified !== null && lines.some((line) => line.sequence >= unverified.from)) {
    out.push(
      `UNVERIFIED: entries from sequence ${unverified.from} could not be verified (${unverified.why}); they are what the database holds, not proven history`,
    );
  }
  if (chainBreak !== null) {
    out.push(
      `WARNING: the audit chain is broken at sequence ${chainBreak.sequence} (${chainBreak.problem}); run asyncjob audit verify`,
    );
  }
  return `${out.join('\n')}\n`;
}

/** The JSON form ({@link AuditShowJson}). Pure. */
export function storyJson(
  operationId: string,
  stored: readonly StoredEntry[],
  chainBreak: ChainBreak | null,
  unverified: Unverified | null = null,
): AuditShowJson {
  const context = decisionContext(stored.map((s) => s.entry));
  const signatureVerified = (entry: JournalEntry): { signatureVerified?: boolean } =>
    entry.body.kind === 'decision' && entry.body.signature !== undefined
      ? { signatureVerified: signatureStatus(context, { ...entry, body: entry.body }).kind === 'verified' }
      : {};
  return {
    schema: 'asyncjob.audit-show/v1',
    operationId,
    chain: { intact: chainBreak === null, break: chainBreak },
    entries: stored.map((s) => ({
      sequence: s.entry.sequence,
      at: s.entry.at,
      actor: s.entry.actor,
      kind: s.entry.body.kind,
      text: storyText(s.entry, context),
      prevHash: s.prevHash,
      hash: s.hash,
      body: s.entry.body,
      verified: unverified === null || s.entry.sequence < unverified.from,
      ...signatureVerified(s.entry),
    })),
  };
}
