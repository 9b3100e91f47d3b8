/**
 * The summary `client.result` returns (`OperationSummary`) says why a failed operation failed: the provider's
 * error code and message, which README.md's library example prints for a `failed` operation.
 */
import { describe, expect, it } from 'vitest';
import { operationSummary } from '../../src/core/step';
import type { OperationSummary } from '../../src/workflows/messages';
import { observing, record } from '../cli/fixtures';

describe('the summary of a failed operation', () => {
  it('carries the provider error code and message from the record', () => {
    const base = observing(0.9);
    const failed = record({
      ...base,
      localState: 'failed',
      remote: {
        ...base.remote,
        state: 'failed',
        category: 'failure',
        lastError: { code: 'job_failed', message: 'the job failed' },
      },
    });
    const summary: OperationSummary = operationSummary(failed);
    expect(summary).toMatchObject({
      localState: 'failed',
      remoteState: 'failed',
      providerError: { code: 'job_failed', message: 'the job failed' },
    });
    // What README.md's example prints for it.
    expect(['failed', summary.providerError?.code, summary.providerError?.message].join(' ')).toBe(
      'failed job_failed the job failed',
    );
  });

  it('omits providerError when the provider gave none', () => {
    expect(operationSummary(record({ localState: 'succeeded' }))).not.toHaveProperty('providerError');
  });
});
