import { describe, expect, it } from 'vitest';
import { type JournalEntry } from '../../src/core/journal';
import { clockTime, formatStoryText, renderStory, storyJson, storyText } from '../../src/audit/story';
import { storyEntries } from '../store/fixtures';

const [intent, created, accepted, , escalated, decided, artifact] = storyEntries('op-1');

function observation(
  body: Partial<Extract<JournalEntry['body'], { kind: 'observation' }>>,
  at = '2026-11-29T10:20:31.000Z',
): JournalEntry {
  return {
    operationId: 'op-1',
    sequence: 9,
    at,
    actor: 'worker:a',
    body: { kind: 'observation', action: 'status', transport: 'response', ...body },
  };
}

describe('story lines (T3)', () => {
  it.each([
    [
      'the seeds 503 with Retry-After line',
      observation({
        httpStatus: 503,
        headers: { 'Retry-After': '120' },
        nextPollAt: '2026-11-29T10:22:31.000Z',
        delaySource: 'provider_retry_after',
      }),
      'received 503, Retry-After 120, next poll 10:22:31 from provider guidance',
    ],
    ['a transition with its job', accepted!, 'create_pending -> accepted (job job_7ad2) by workflow'],
    [
      'an escalation with its options',
      escalated!,
      'escalated: deadline_exceeded; options: extend, cancel_at_provider, close',
    ],
    [
      'a running poll with progress and local backoff',
      observation({
        httpStatus: 200,
        remoteState: 'running',
        progress: 0.4,
        nextPollAt: '2026-11-29T10:21:01.000Z',
        delaySource: 'local_backoff',
      }),
      'received 200, state running (40%), next poll 10:21:01 from local backoff',
    ],
    ['a create answer naming the job', created!, 'create: received 202, job job_7ad2, decision accept'],
    [
      'a status call whose worker was lost (reserved, maybe never sent)',
      observation({
        transport: 'ambiguous',
        errorCategory: 'activity_failed',
        decision: 'retry',
        nextPollAt: '2026-11-29T10:20:33.000Z',
        delaySource: 'local_backoff',
        statusRequestsUsed: 4,
        statusRequestsAllowed: 20,
      }),
      'request reserved, then the worker was lost before an answer (it may never have been sent), activity_failed, next poll 10:20:33 from local backoff, 4 of 20 status requests used',
    ],
    [
      'an ambiguous create',
      observation({
        action: 'create',
        transport: 'ambiguous',
        errorCategory: 'timeout_after_send',
        decision: 'reconcile',
      }),
      'create: sent, no complete answer (the provider may have acted), timeout_after_send, decision reconcile',
    ],
    [
      'a rejected hint and the request count',
      observation(
        {
          httpStatus: 200,
          remoteState: 'queued',
          hintRejected: 'poll_after_seconds is negative',
          nextPollAt: '2026-11-30T00:00:05.000Z',
          delaySource: 'local_backoff',
          statusRequestsUsed: 3,
          statusRequestsAllowed: 20,
        },
        '2026-11-29T23:59:59.000Z',
      ),
      'received 200, state queued, hint rejected: poll_after_seconds is negative, next poll 2026-11-30 00:00:05 from local backoff, 3 of 20 status requests used',
    ],
    [
      'a decision with its bounds',
      decided!,
      'decision extend by alice@example.com, accepted: customer agreed to wait; bounds extendMs=900000, extraStatusRequests=4; route not recorded, no decider policy, unsigned',
    ],
    [
      'an artifact',
      artifact!,
      'artifact file:///var/asyncjob/op-1.json (1234 bytes, sha256 cdcdcdcdcdcd, application/json) valid',
    ],
    [
      'the intent',
      intent!,
      'intent recorded by workflow: create at acme, authorised by alice@example.com, started by billing-service, trace trace-1, create deadline 10:23:00, result deadline 11:18:00',
    ],
    [
      'V1: a create answer naming its job by its poll URL only',
      observation({
        action: 'create',
        httpStatus: 202,
        pollUrl: 'https://api.example.test/operations/abc',
        decision: 'wait',
      }),
      'create: received 202, poll URL https://api.example.test/operations/abc, decision wait',
    ],
    [
      'V1: a pending answer moving polling to a new URL',
      observation({ httpStatus: 202, remoteState: 'http_202', pollUrl: 'https://api.example.test/post/newuri/1' }),
      'received 202, polling moves to https://api.example.test/post/newuri/1, state http_202',
    ],
    [
      "S2: a failed job with the provider's error",
      observation({
        httpStatus: 200,
        remoteState: 'Failed',
        providerError: { code: 'Quota', message: 'no quota left' },
        decision: 'stop',
      }),
      'received 200, provider error Quota: no quota left, state Failed, decision stop',
    ],
    [
      'the first transition',
      {
        ...accepted!,
        body: { kind: 'transition', from: null, to: 'create_pending', cause: 'intent_recorded' },
      } as JournalEntry,
      'start -> create_pending by workflow',
    ],
  ])('T3: renders %s', (_name, entry, text) => {
    expect(storyText(entry)).toBe(text);
  });

  it('T3: the text form is one line per entry, times in UTC, with a warning when the chain is broken', () => {
    const entries = storyEntries('op-1');
    const text = formatStoryText('op-1', renderStory(entries), null);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(entries.length + 1);
    expect(lines[0]).toBe('operation op-1 (times UTC, 2026-11-29)');
    expect(lines[3]).toBe('10:18:02 create_pending -> accepted (job job_7ad2) by workflow');
    expect(lines[4]).toBe(
      '10:20:31 received 503, Retry-After 120, next poll 10:22:31 from provider guidance, 3 of 20 status requests used',
    );
    const broken = formatStoryText('op-1', renderStory(entries), {
      operationId: 'op-1',
      sequence: 4,
      problem: 'hash_mismatch',
      expected: 'a',
      found: 'b',
    });
    expect(broken.trimEnd().split('\n').pop()).toContain('broken at sequence 4 (hash_mismatch)');
  });

  it('the JSON form carries the documented stable shape', () => {
    const stored = storyEntries('op-1')
      .slice(0, 2)
      .map((entry, i) => ({ entry, prevHash: `p${i}`, hash: `h${i}` }));
    expect(storyJson('op-1', stored, null)).toEqual({
      schema: 'asyncjob.audit-show/v1',
      operationId: 'op-1',
      chain: { intact: true, break: null },
      entries: stored.map((s) => ({
        sequence: s.entry.sequence,
        at: s.entry.at,
        actor: s.entry.actor,
        kind: s.entry.body.kind,
        text: storyText(s.entry),
        prevHash: s.prevHash,
        hash: s.hash,
        body: s.entry.body,
        verified: true,
      })),
    });
    const unverified = storyJson('op-1', stored, null, { from: 2, why: 'key_id_unknown' });
    expect(unverified.entries.map((e) => e.verified)).toEqual([true, false]);
  });

  it('T2: an entry the audit could not verify is marked UNVERIFIED, never told as history', () => {
    const entries = storyEntries('op-1');
    const text = formatStoryText('op-1', renderStory(entries), null, { from: 4, why: 'key_id_unknown' });
    const lines = text.trimEnd().split('\n');
    expect(lines[3]).toBe('10:18:02 create_pending -> accepted (job job_7ad2) by workflow');
    expect(lines[4]).toBe(
      '10:20:31 UNVERIFIED: received 503, Retry-After 120, next poll 10:22:31 from provider guidance, 3 of 20 status requests used',
    );
    expect(lines.slice(4, entries.length + 1).every((l) => l.includes('UNVERIFIED: '))).toBe(true);
    expect(lines.at(-1)).toBe(
      'UNVERIFIED: entries from sequence 4 could not be verified (key_id_unknown); they are what the database holds, not proven history',
    );
  });

  it('clockTime shows the date only when the day changes', () => {
    expect(clockTime('2026-11-29T10:22:31.000Z', '2026-11-29T10:20:31.000Z')).toBe('10:22:31');
    expect(clockTime('2026-11-30T00:00:01.000Z', '2026-11-29T23:59:59.000Z')).toBe('2026-11-30 00:00:01');
  });
});
