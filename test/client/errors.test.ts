import { describe, expect, it } from 'vitest';
import {
  AsyncJobAborted,
  AsyncJobConnectionError,
  AsyncJobError,
  AsyncJobQueryTimeout,
  AsyncJobServerError,
  AsyncJobUpdateTimeout,
  AsyncJobWaitTimeout,
  ERROR_CODES,
  JoinMismatchError,
  OperationEndedError,
  OperationFailedError,
  ProviderUnservedError,
  AsyncJobInputError,
  AsyncJobRequestRefused,
  FingerprintMismatchError,
  OperationNotFoundError,
  shownError,
} from '../../src/client';

describe('client errors', () => {
  it('every error carries a stable code of the one registry, is an AsyncJobError and is named by its class', () => {
    const errors = [
      new AsyncJobInputError([{ path: 'a', message: 'b' }]),
      new FingerprintMismatchError('op', 'sha256:1', 'sha256:2'),
      new OperationNotFoundError('op'),
      new AsyncJobRequestRefused('op', 'ASYNCJOB_ERR_OPTION_NOT_OFFERED', 'no'),
      new ProviderUnservedError('rest', 'asyncjob-provider-rest', ['demo-reports']),
      new JoinMismatchError('op', [{ field: 'startedBy', existing: 'a', given: 'b' }]),
      new AsyncJobWaitTimeout('op', 100),
      new AsyncJobAborted('op', { cause: new Error('stop') }),
      new AsyncJobServerError('op', 8, 'rate limited', { cause: new Error('x') }),
      new OperationEndedError('op', 'FAILED', 'create_pending', {
        executionStatus: 'FAILED',
        type: 'ASYNCJOB_ERR_INVALID_INPUT',
        message: 'resultDeadline: bad',
      }),
      new AsyncJobConnectionError('127.0.0.1:7233', { cause: new Error('refused') }),
      new AsyncJobQueryTimeout('op', 100, { cause: new Error('x') }),
      new AsyncJobUpdateTimeout('op', 100, { cause: new Error('x') }),
      new OperationFailedError('op', 'terminated', { cause: new Error('x') }),
    ];
    for (const e of errors) {
      expect(e).toBeInstanceOf(AsyncJobError);
      expect(Object.keys(ERROR_CODES)).toContain(e.code);
      expect(e.message.startsWith(e.code), 'the message is the text; the code is apart').toBe(false);
      expect(e.name).toBe(e instanceof AsyncJobAborted ? 'AbortError' : e.constructor.name);
    }
  });

  it('a refusal is shown with its own code and text; any other error with its code and message', () => {
    const refused = new AsyncJobRequestRefused('op', 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', 'no cancel endpoint');
    expect(shownError(refused)).toEqual({ code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', text: 'no cancel endpoint' });
    expect(shownError(new OperationNotFoundError('op'))).toEqual({
      code: 'ASYNCJOB_ERR_NOT_FOUND',
      text: 'no operation op',
    });
  });

  it('AsyncJobInputError names every field in its message', () => {
    const e = new AsyncJobInputError([
      { path: 'provider', message: 'must match [A-Za-z0-9._:-]{1,200}' },
      { path: '', message: 'Unrecognized key: "extra"' },
    ]);
    expect(e.message).toBe(
      'invalid input: provider: must match [A-Za-z0-9._:-]{1,200}; (input): Unrecognized key: "extra"',
    );
  });

  it("AsyncJobRequestRefused keeps the workflow's code apart from its own", () => {
    const e = new AsyncJobRequestRefused('op', 'ASYNCJOB_ERR_DECISION_TOO_LATE', 'after the deadline');
    expect(e.code).toBe('ASYNCJOB_ERR_REFUSED');
    expect(e.refusalCode).toBe('ASYNCJOB_ERR_DECISION_TOO_LATE');
    expect(e.message).toBe('ASYNCJOB_ERR_DECISION_TOO_LATE: after the deadline');
  });

  it('an ended operation is refused with ASYNCJOB_ERR_OPERATION_FINAL, its state and why it ended', () => {
    const e = new OperationEndedError('op', 'FAILED', 'create_pending', {
      executionStatus: 'FAILED',
      type: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN',
      message: 'ASYNCJOB_ERR_PROVIDER_UNKNOWN: provider rest is not registered',
    });
    expect(e).toBeInstanceOf(AsyncJobRequestRefused);
    expect(e.refusalCode).toBe('ASYNCJOB_ERR_OPERATION_FINAL');
    expect(e.message).toBe(
      'ASYNCJOB_ERR_OPERATION_FINAL: operation op has ended (workflow FAILED: ASYNCJOB_ERR_PROVIDER_UNKNOWN: provider rest is not registered; state create_pending)',
    );
  });

  it('a provider no worker serves is named with the served ones and the way to start anyway', () => {
    const e = new ProviderUnservedError('rest', 'asyncjob-provider-rest', ['demo-reports']);
    expect(e.message).toMatch(
      /^no worker serves provider rest \(nobody polled task queue asyncjob-provider-rest recently\); served now: demo-reports .*--allow-unserved-provider/,
    );
  });

  it('a differing join lists every field with its two values', () => {
    const e = new JoinMismatchError('op', [
      { field: 'startedBy', existing: 'svc:a', given: 'svc:b' },
      { field: 'clientReference', existing: undefined, given: 'r-1' },
    ]);
    expect(e.message).toMatch(
      /^operation op already exists with other settings: startedBy is "svc:a", given "svc:b"; clientReference is \(none\), given "r-1" /,
    );
  });
});
