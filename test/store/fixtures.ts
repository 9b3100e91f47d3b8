/** Journal entries and snapshots for store tests: a realistic operation story, built per operation ID. */
import { type JournalEntry } from '../../src/core/journal';
import { type OperationSnapshot } from '../../src/adapters/store/operation-store';

const FINGERPRINT = `sha256:${'ab'.repeat(32)}`;

/** The seeds' story for one operation: intent, create, accepted, a 503 with Retry-After, escalation, decision, artifact. */
export function storyEntries(operationId: string, provider = 'acme'): JournalEntry[] {
  return [
    {
      operationId,
      sequence: 1,
      at: '2026-11-29T10:18:00.000Z',
      actor: 'workflow',
      body: {
        kind: 'intent',
        provider,
        requestFingerprint: FINGERPRINT,
        traceId: 'trace-1',
        authorisedBy: 'alice@example.com',
        startedBy: 'billing-service',
        createDeadlineAt: '2026-11-29T10:23:00.000Z',
        resultDeadlineAt: '2026-11-29T11:18:00.000Z',
      },
    },
    {
      operationId,
      sequence: 2,
      at: '2026-11-29T10:18:01.000Z',
      actor: 'worker:host-a',
      body: {
        kind: 'observation',
        action: 'create',
        request: { method: 'POST', url: 'https://api.acme.test/jobs' },
        transport: 'response',
        httpStatus: 202,
        headers: { location: '/jobs/job_7ad2', authorization: '[redacted]' },
        remoteJobId: 'job_7ad2',
        decision: 'accept',
      },
    },
    {
      operationId,
      sequence: 3,
      at: '2026-11-29T10:18:02.000Z',
      actor: 'workflow',
      body: {
        kind: 'transition',
        from: 'create_pending',
        to: 'accepted',
        cause: 'create_accepted',
        evidenceSequence: 2,
        remoteJobId: 'job_7ad2',
      },
    },
    {
      operationId,
      sequence: 4,
      at: '2026-11-29T10:20:31.000Z',
      actor: 'worker:host-a',
      body: {
        kind: 'observation',
        action: 'status',
        transport: 'response',
        httpStatus: 503,
        headers: { 'retry-after': '120' },
        decision: 'wait',
        nextPollAt: '2026-11-29T10:22:31.000Z',
        delaySource: 'provider_retry_after',
        statusRequestsUsed: 3,
        statusRequestsAllowed: 20,
      },
    },
    {
      operationId,
      sequence: 5,
      at: '2026-11-29T10:25:00.000Z',
      actor: 'workflow',
      body: {
        kind: 'escalation',
        reason: 'deadline_exceeded',
        message: 'result deadline passed while the job was running',
        options: ['extend', 'cancel_at_provider', 'close'],
      },
    },
    {
      operationId,
      sequence: 6,
      at: '2026-11-29T10:31:00.000Z',
      actor: 'alice@example.com',
      body: {
        kind: 'decision',
        decision: 'extend',
        approvedBy: 'alice@example.com',
        reason: 'customer agreed to wait',
        bounds: { extendMs: 900000, extraStatusRequests: 4 },
        accepted: true,
      },
    },
    {
      operationId,
      sequence: 7,
      at: '2026-11-29T10:40:00.000Z',
      actor: 'worker:host-a',
      body: {
        kind: 'artifact',
        location: `file:///var/asyncjob/${operationId}.json`,
        sha256: 'cd'.repeat(32),
        sizeBytes: 1234,
        contentType: 'application/json',
        validation: 'valid',
      },
    },
  ];
}

/** A snapshot of an operation's current record. */
export function snapshot(operationId: string, overrides: Partial<OperationSnapshot> = {}): OperationSnapshot {
  return {
    operationId,
    provider: 'acme',
    localState: 'observing',
    remoteJobIds: [],
    escalationReason: null,
    resultDeadlineAt: '2026-11-29T11:18:00.000Z',
    updatedAt: '2026-11-29T10:20:31.000Z',
    version: 1,
    record: { statusRequestsUsed: 3, nextPollAt: '2026-11-29T10:22:31.000Z' },
    ...overrides,
  };
}
