/** How our errors reach Temporal: `type` = our stable code, `nonRetryable` as the registry says a retry cannot help. */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { InvalidHttpRequestError } from '../../src/adapters/http';
import { ProviderContractError } from '../../src/adapters/providers';
import { ProviderRegistryError } from '../../src/adapters/providers/registry';
import { StoreError } from '../../src/adapters/store/store-errors';
import { toFailure, UNEXPECTED_FAILURE_TYPE } from '../../src/activities';
import { ERROR_CODES } from '../../src/core/codes';
import { AsyncJobError } from '../../src/core/errors';
import { snapshotOf, toJournalEntry } from '../../src/activities/journal-writer';
import { newRecord } from './harness';

describe('toFailure', () => {
  it.each([
    [new AsyncJobError('ASYNCJOB_ERR_INTENT_MISSING', 'no intent'), 'ASYNCJOB_ERR_INTENT_MISSING', true],
    [new AsyncJobError('ASYNCJOB_ERR_ARTIFACT_FAILED', 'disk full'), 'ASYNCJOB_ERR_ARTIFACT_FAILED', false],
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
    expect(failure.message).toBe(`${type}: ${error.message}`);
    expect(failure.details).toEqual([error.message]);
  });

  it('derives nonRetryable from the registry for every code', () => {
    for (const [code, { retryable }] of Object.entries(ERROR_CODES)) {
      const failure = toFailure(new AsyncJobError(code as keyof typeof ERROR_CODES, 'x'));
      expect(failure.type, code).toBe(code);
      expect(failure.nonRetryable, code).toBe(!retryable);
    }
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
      actor: 'service:test',
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
