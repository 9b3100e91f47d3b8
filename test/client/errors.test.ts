import { describe, expect, it } from 'vitest';
import {
  AsyncJobClientError,
  AsyncJobInputError,
  AsyncJobRequestRefused,
  CLIENT_CODES,
  FingerprintMismatchError,
  OperationNotFoundError,
  parseRefusal,
} from '../../src/client';

describe('client errors', () => {
  it.each([
    ['ASYNCJOB_ERR_OPTION_NOT_OFFERED: option: "x" was not offered', { code: 'ASYNCJOB_ERR_OPTION_NOT_OFFERED', message: 'option: "x" was not offered' }],
    ['ASYNCJOB_ERR_CANCEL_UNSUPPORTED:provider has no cancel', { code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', message: 'provider has no cancel' }],
    ['ASYNCJOB_ERR_INVALID_INPUT: reason: too short\nsecond line', { code: 'ASYNCJOB_ERR_INVALID_INPUT', message: 'reason: too short\nsecond line' }],
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
    expect(e.message).toBe('invalid input: provider: must match [A-Za-z0-9._:-]{1,200}; (input): Unrecognized key: "extra"');
  });

  it('AsyncJobRequestRefused keeps the workflow\'s code apart from its own', () => {
    const e = new AsyncJobRequestRefused('op', 'ASYNCJOB_ERR_DECISION_TOO_LATE', 'after the deadline');
    expect(e.code).toBe('ASYNCJOB_ERR_REFUSED');
    expect(e.refusalCode).toBe('ASYNCJOB_ERR_DECISION_TOO_LATE');
    expect(e.message).toBe('ASYNCJOB_ERR_DECISION_TOO_LATE: after the deadline');
  });
});
