import { describe, expect, it } from 'vitest';
import {
  AsyncJobAborted,
  AsyncJobClientError,
  AsyncJobServerError,
  AsyncJobWaitTimeout,
  JoinMismatchError,
  OperationEndedError,
  ProviderUnservedError,
  AsyncJobInputError,
  AsyncJobRequestRefused,
  CLIENT_CODES,
  FingerprintMismatchError,
  OperationNotFoundError,
  parseRefusal,
} from '../../src/client';

describe('client errors', () => {
  it.each([
    [
      'ASYNCJOB_ERR_OPTION_NOT_OFFERED: option: "x" was not offered',
      { code: 'ASYNCJOB_ERR_OPTION_NOT_OFFERED', message: 'option: "x" was not offered' },
    ],
    [
      'ASYNCJOB_ERR_CANCEL_UNSUPPORTED:provider has no cancel',
      { code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', message: 'provider has no cancel' },
    ],
    [
      'ASYNCJOB_ERR_INVALID_INPUT: reason: too short\nsecond line',
      { code: 'ASYNCJOB_ERR_INVALID_INPUT', message: 'reason: too short\nsecond line' },
    ],
    ['Unknown update handler', { code: 'ASYNCJOB_ERR_REFUSED', message: 'Unknown update handler' }],
    ['asyncjob_err_lower: no', { code: 'ASYNCJOB_ERR_REFUSED', message: 'asyncjob_err_lower: no' }],
  ])('parseRefusal reads the code prefix of %j', (message, expected) => {
    expect(parseRefusal(message)).toEqual(expected);
  });

  it('every error carries a documented stable code and is an AsyncJobClientError', () => {
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
    ];
    for (const e of errors) {
      expect(e).toBeInstanceOf(AsyncJobClientError);
      expect(Object.keys(CLIENT_CODES)).toContain(e.code);
    }
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
