import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  createRedactionRules,
  redactHeaders,
  redactJson,
  redactText,
  redactUrl,
} from '../../../src/adapters/http';

const rules = createRedactionRules({
  headerNames: ['X-Provider-Key'],
  fieldNames: ['ssn', 'webhookSecret'],
  queryParamNames: ['code'],
});

describe('redactHeaders (T4)', () => {
  it.each([
    ['Authorization', 'Bearer abc.def.ghi', REDACTED],
    ['Proxy-Authorization', 'Basic dXNlcjpwYXNz', REDACTED],
    ['Cookie', 'session=abc', REDACTED],
    ['Set-Cookie', ['a=1', 'b=2'], REDACTED],
    ['X-Api-Key', 'k-123', REDACTED],
    ['x-provider-key', 'configured', REDACTED],
    ['Content-Type', 'application/json', 'application/json'],
    ['Retry-After', '120', '120'],
    ['Link', '<https://p.example/next?token=abc123>; rel=next', '<https://p.example/next?token=[redacted]>; rel=next'],
    ['Warning', 'echo Bearer eyJabcdefgh12345', `echo Bearer ${REDACTED}`],
  ])('T4: %s', (name, value, expected) => {
    const out = redactHeaders({ [name]: value }, rules);
    expect(out).toEqual({ [name.toLowerCase()]: expected });
  });

  it('T4: lower-cases names, joins repeated values, drops undefined', () => {
    expect(redactHeaders({ 'X-Multi': ['a', 'b'], 'X-None': undefined, 'Content-Length': 12 })).toEqual({
      'x-multi': 'a, b',
      'content-length': '12',
    });
  });
});

describe('redactJson (T4)', () => {
  it.each([
    [
      { password: 'p', user: 'u' },
      { password: REDACTED, user: 'u' },
    ],
    [{ nested: { deep: [{ SSN: '123-45-6789', ok: 1 }] } }, { nested: { deep: [{ SSN: REDACTED, ok: 1 }] } }],
    [{ access_token: { any: 'shape' } }, { access_token: REDACTED }],
    [
      { webhookSecret: 'w', client_secret: 'c', api_key: 'k' },
      { webhookSecret: REDACTED, client_secret: REDACTED, api_key: REDACTED },
    ],
    [{ message: 'retry with Bearer abcdefgh12345678' }, { message: `retry with Bearer ${REDACTED}` }],
    [
      ['Bearer abcdefgh12345678', 3, null, true],
      [`Bearer ${REDACTED}`, 3, null, true],
    ],
    [
      { state: 'running', progress: 0.5, idempotency_key: 'k-1' },
      { state: 'running', progress: 0.5, idempotency_key: 'k-1' },
    ],
    ['plain', 'plain'],
    [42, 42],
  ])('T4: %j', (input, expected) => {
    const copy = JSON.parse(JSON.stringify(input)) as unknown;
    expect(redactJson(input, rules)).toEqual(expected);
    expect(input).toEqual(copy);
  });
});

describe('redactUrl (T4)', () => {
  it.each([
    ['https://p.example/jobs/1?token=abc&page=2', 'https://p.example/jobs/1?token=[redacted]&page=2'],
    [
      'https://p.example/r?X-Amz-Signature=deadbeef&X-Amz-Expires=60',
      'https://p.example/r?X-Amz-Signature=[redacted]&X-Amz-Expires=60',
    ],
    [
      'https://p.example/r?sig=1&SIG=2&key=3&secret=4&password=5&access_token=6&signature=7',
      'https://p.example/r?sig=[redacted]&SIG=[redacted]&key=[redacted]&secret=[redacted]&password=[redacted]&access_token=[redacted]&signature=[redacted]',
    ],
    ['https://p.example/cb?code=xyz&state=s', 'https://p.example/cb?code=[redacted]&state=s'],
    ['https://user:pass@p.example/x', 'https://p.example/x'],
    ['https://p.example/x#access_token=abc&type=bearer', 'https://p.example/x#access_token=[redacted]&type=bearer'],
    ['/relative/path?acc%65ss_token=a', '/relative/path?acc%65ss_token=[redacted]'],
    ['https://p.example/jobs/1', 'https://p.example/jobs/1'],
    ['https://p.example/x?flag&token=', 'https://p.example/x?flag&token=[redacted]'],
  ])('T4: %s', (input, expected) => {
    expect(redactUrl(input, rules)).toBe(expected);
  });
});

describe('redactText (T4)', () => {
  it.each([
    ['Authorization: Bearer abc.def.ghi\nok', `Authorization: ${REDACTED}\nok`],
    ['the token Bearer tk_fake_0123456789 was refused', `the token Bearer ${REDACTED} was refused`],
    ['jwt eyJhbGciOiJI.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4 here', `jwt ${REDACTED} here`],
    ['{"password": "hunter2", "user": "u"}', `{"password": "${REDACTED}", "user": "u"}`],
    ['{"ssn":"1\\"23"}', `{"ssn":"${REDACTED}"}`],
    ['GET /x?token=abc&page=1 failed', `GET /x?token=${REDACTED}&page=1 failed`],
    ['nothing secret here, token budget exhausted', 'nothing secret here, token budget exhausted'],
    ['x-provider-key: abc', `x-provider-key: ${REDACTED}`],
  ])('T4: %s', (input, expected) => {
    expect(redactText(input, rules)).toBe(expected);
  });

  it('T4: the defaults cannot be removed by configuration', () => {
    const minimal = createRedactionRules({ headerNames: [], fieldNames: [], queryParamNames: [] });
    expect(redactHeaders({ Authorization: 'x' }, minimal)).toEqual({ authorization: REDACTED });
    expect(redactJson({ password: 'p' }, minimal)).toEqual({ password: REDACTED });
    expect(redactUrl('https://a/?token=t', minimal)).toBe(`https://a/?token=${REDACTED}`);
  });
});
