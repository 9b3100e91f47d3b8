/**
 * The one mapping from an operation's final summary to the typed failure its calling workflow gets (a parent of a
 * child operation, a Nexus caller): the code by final state, the summary as the failure's detail, never retryable.
 */
import { describe, expect, it } from 'vitest';
import { isErrorCode } from '../../src/core/codes';
import { OUTCOME_CODES, outcomeFailure } from '../../src/core/outcome-failure';
import type { OperationSummary } from '../../src/workflows/messages';

function summary(overrides: Partial<OperationSummary>): OperationSummary {
  return {
    operationId: 'op-1',
    provider: 'rest',
    localState: 'succeeded',
    result: null,
    escalation: null,
    statusRequestsUsed: 3,
    statusRequestsAllowed: 100,
    ...overrides,
  };
}

describe('outcomeFailure: the typed failure of an operation that did not succeed', () => {
  it('a succeeded operation is no failure', () => {
    expect(outcomeFailure(summary({ localState: 'succeeded' }))).toBeNull();
  });

  it.each([
    ['failed', 'ASYNCJOB_ERR_OPERATION_FAILED'],
    ['cancelled', 'ASYNCJOB_ERR_OPERATION_CANCELLED'],
    ['closed', 'ASYNCJOB_ERR_OPERATION_CLOSED'],
    ['escalated', 'ASYNCJOB_ERR_ESCALATION_EXPIRED'],
  ] as const)('an operation that ended %s is %s, non-retryable, with the summary as its detail', (state, code) => {
    const ended = summary({ localState: state });
    expect(outcomeFailure(ended)).toEqual({
      type: code,
      message: `${code}: operation op-1 ended ${state}`,
      details: [ended],
      nonRetryable: true,
    });
  });

  it('every code of the table is a registered code', () => {
    expect(Object.values(OUTCOME_CODES).filter((code) => !isErrorCode(code))).toEqual([]);
  });

  it("the provider's error, an escalation's reason and a refusal's issues are named in the message", () => {
    expect(
      outcomeFailure(summary({ localState: 'failed', providerError: { code: 'render_error', message: 'no fonts' } }))
        ?.message,
    ).toBe('ASYNCJOB_ERR_OPERATION_FAILED: operation op-1 ended failed (render_error: no fonts)');
    expect(
      outcomeFailure(
        summary({ localState: 'escalated', escalation: { reason: 'unknown_state', text: 'state "manual_review"' } }),
      )?.message,
    ).toBe('ASYNCJOB_ERR_ESCALATION_EXPIRED: operation op-1 ended escalated (unknown_state: state "manual_review")');
  });

  it('C5: an operation refused before anything was sent keeps the refusal code', () => {
    const refused = summary({
      localState: 'failed',
      refusal: { code: 'ASYNCJOB_ERR_INVALID_VARIABLE', issues: [{ path: 'variables.version', message: 'unknown' }] },
    });
    expect(outcomeFailure(refused)).toMatchObject({
      type: 'ASYNCJOB_ERR_INVALID_VARIABLE',
      message: 'ASYNCJOB_ERR_INVALID_VARIABLE: operation op-1 ended failed (variables.version: unknown)',
    });
  });

  it('a summary in a state that is no end is ASYNCJOB_ERR_WORKFLOW_FAILED', () => {
    expect(outcomeFailure(summary({ localState: 'observing' }))).toMatchObject({
      type: 'ASYNCJOB_ERR_WORKFLOW_FAILED',
      message: 'ASYNCJOB_ERR_WORKFLOW_FAILED: operation op-1 returned in state observing, which is no end',
    });
  });
});
