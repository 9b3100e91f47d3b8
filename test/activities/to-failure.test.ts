/** How our errors reach Temporal: `type` = our stable code, `nonRetryable` where a retry cannot help. */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { InvalidHttpRequestError } from '../../src/adapters/http';
import { ProviderContractError } from '../../src/adapters/providers';
import { ProviderRegistryError } from '../../src/adapters/providers/registry';
import { StoreError } from '../../src/adapters/store/store-errors';
import { ActivityError, toFailure, UNEXPECTED_FAILURE_TYPE } from '../../src/activities';
import { snapshotOf, toJournalEntry } from '../../src/activities/journal-writer';
import { newRecord } from './harness';

describe('toFailure', () => {
  it.each([
    [new ActivityError('ASYNCJOB_ERR_INTENT_MISSING', 'no intent', true), 'ASYNCJOB_ERR_INTENT_MISSING', true],
    [new ActivityError('ASYNCJOB_ERR_ARTIFACT_FAILED', 'disk full', false), 'ASYNCJOB_ERR_ARTIFACT_FAILED', false],
    [
      new ProviderRegistryError('ASYNCJOB_ERR_PROVIDER_UNKNOWN', 'acme', 'unknown'),
      'ASYNCJOB_ERR_PROVIDER_UNKNOWN',
      true,
    ],
    [
      new ProviderContractError('ASYNCJOB_ERR_ADAPTER_INVALID', 'acme', [{ path: 'status', message: 'Required' }]),
      'ASYNCJOB_ERR_ADAPTER_INVALID',
      true,
    ],
    [new StoreError('ASYNCJOB_ERR_JOURNAL_CONFLICT', 'taken'), 'ASYNCJOB_ERR_JOURNAL_CONFLICT', true],
    [new StoreError('ASYNCJOB_ERR_STORE_CLOSED', 'closed'), 'ASYNCJOB_ERR_STORE_CLOSED', false],
    [new InvalidHttpRequestError('method', 'bad'), 'ASYNCJOB_ERR_HTTP_INVALID_REQUEST', true],
    [new Error('boom'), UNEXPECTED_FAILURE_TYPE, false],
  ])('maps %s to its stable type', (error, type, nonRetryable) => {
    const failure = toFailure(error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(nonRetryable);
    expect(failure.cause).toBe(error);
  });

  it('passes an ApplicationFailure through unchanged', () => {
    const failure = ApplicationFailure.nonRetryable('x', 'SOME_TYPE');
    expect(toFailure(failure)).toBe(failure);
  });
});

describe('journal writer', () => {
  it('M3: a step entry becomes a journal entry with its ISO time; the snapshot version is the last sequence', () => {
    const record = newRecord('rest', { report: 'x' });
    const [transition] = record.journal.transitions;
    expect(toJournalEntry(record.operationId, transition!)).toEqual({
      operationId: record.operationId,
      sequence: 2,
      at: new Date(transition!.atMs).toISOString(),
      actor: 'svc:test',
      body: transition!.body,
    });
    const snapshot = snapshotOf(record, Date.UTC(2026, 10, 29, 12));
    expect(snapshot).toMatchObject({
      operationId: record.operationId,
      provider: 'rest',
      localState: 'create_pending',
      remoteJobIds: [],
      escalationReason: null,
      version: 2,
      updatedAt: '2026-11-29T12:00:00.000Z',
    });
    expect(snapshot.resultDeadlineAt).toBe(new Date(record.deadlines.resultDeadlineMs).toISOString());
  });
});
