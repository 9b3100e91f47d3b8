/**
 * The client checks a start request with the workflow's own rules (`validateStartRequest`), every bad field at
 * once, before anything is started. A server is not needed: the check comes first.
 */
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { AsyncJobClient, AsyncJobInputError } from '../../src/client';
import { newOperationRecord, type StartRequest, validateStartRequest } from '../../src/core/operation';

const NOW = Date.UTC(2026, 10, 29, 10);
const valid: StartRequest = {
  operationId: 'op-1',
  provider: 'reports',
  payload: { report: 'sales' },
  startedBy: 'svc:billing',
  authorisedBy: 'alice',
  createDeadline: { afterMs: 300_000 },
  resultDeadline: { afterMs: 3_600_000 },
};

describe('validateStartRequest: the one set of rules of the client and the workflow', () => {
  it('accepts a valid request and resolves its deadlines from now', () => {
    expect(validateStartRequest(valid, NOW)).toMatchObject({
      kind: 'ok',
      deadlines: { createDeadlineMs: NOW + 300_000, resultDeadlineMs: NOW + 3_600_000 },
    });
  });

  it('names every bad field at once: the schema and the deadlines together', () => {
    const bad = {
      ...valid,
      operationId: 'has space',
      payload: { s: 'x'.repeat(300_000) },
      policy: { maxStatusRequests: 0 },
      resultDeadline: { afterMs: 60_000 },
    };
    const checked = validateStartRequest(bad, NOW);
    expect(checked.kind).toBe('refused');
    if (checked.kind !== 'refused') return;
    expect(checked.issues.map((i) => i.path)).toEqual([
      'operationId',
      'payload',
      'policy.maxStatusRequests',
      'resultDeadline',
    ]);
    expect(checked.issues.at(-1)!.message).toBe('must not be before the create deadline');
  });

  it('refuses deadlines in the past', () => {
    const checked = validateStartRequest(
      { ...valid, createDeadline: { atMs: NOW - 1 }, resultDeadline: { atMs: NOW } },
      NOW,
    );
    expect(checked).toMatchObject({
      kind: 'refused',
      issues: [
        { path: 'createDeadline', message: 'must be in the future' },
        { path: 'resultDeadline', message: 'must be in the future' },
      ],
    });
  });

  it('is what newOperationRecord refuses too', () => {
    const bad = { ...valid, resultDeadline: { afterMs: 60_000 } };
    const made = newOperationRecord({
      request: bad,
      nowMs: NOW,
      idempotencyToken: 'AAECAwQFBgcICQoLDA0ODw',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    const checked = validateStartRequest(bad, NOW);
    expect(made.kind).toBe('refused');
    if (made.kind === 'refused' && checked.kind === 'refused') expect(made.issues).toEqual(checked.issues);
  });

  it('the client refuses before it talks to any server', async () => {
    // A client whose server does not exist: nothing may be sent for an invalid request.
    const connection = Connection.lazy({ address: '127.0.0.1:1' });
    const client = new AsyncJobClient({ client: new Client({ connection }) });
    try {
      const err = await client.start({ ...valid, resultDeadline: { afterMs: 60_000 } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AsyncJobInputError);
      expect((err as AsyncJobInputError).issues).toEqual([
        { path: 'resultDeadline', message: 'must not be before the create deadline' },
      ]);
    } finally {
      await connection.close();
    }
  });
});
