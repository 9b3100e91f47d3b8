/**
 * V3: the per-operation provider session (cookie jar): origin-bound, RFC 6265 matching of domain, path,
 * expiry and Secure, a fixed Max-Age expiry, and a serialised form that round-trips and stays bounded.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SESSION_COOKIES, ProviderSession } from '../../../src/adapters/http';

const ORIGIN = 'http://127.0.0.1:8080';
const at = (path: string, origin = ORIGIN): URL => new URL(path, origin);

function clock(start = Date.UTC(2026, 0, 1)): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('ProviderSession (V3)', () => {
  it('sends a cookie the provider set back to the provider, and to no other origin (another port, scheme or host)', () => {
    const s = new ProviderSession(ORIGIN);
    s.receive(at('/v1/jobs'), ['sid=abc123; Path=/; HttpOnly']);
    expect(s.cookieHeader(at('/v1/jobs/job_1'))).toBe('sid=abc123');
    expect(s.cookieHeader(at('/v1/jobs/job_1', 'http://127.0.0.1:8081'))).toBeUndefined();
    expect(s.cookieHeader(at('/v1/jobs/job_1', 'https://127.0.0.1:8080'))).toBeUndefined();
    expect(s.cookieHeader(at('/v1/jobs/job_1', 'http://localhost:8080'))).toBeUndefined();
  });

  it('ignores Set-Cookie from another origin, and a Domain attribute that does not cover the provider host', () => {
    const s = new ProviderSession('http://api.example.test');
    s.receive(at('/', 'http://other.example.test'), ['planted=1; Path=/']);
    s.receive(at('/', 'http://api.example.test'), [
      'wide=1; Domain=evil.test; Path=/',
      'pub=1; Domain=com; Path=/',
      'ok=1; Path=/',
    ]);
    expect(s.cookieHeader(at('/', 'http://api.example.test'))).toBe('ok=1');
    expect(s.names()).toEqual(['ok']);
  });

  it('follows RFC 6265 path matching: a cookie for /v1/jobs is not sent to /v2 or /v1/jobsx; the default path is the directory', () => {
    const s = new ProviderSession(ORIGIN);
    s.receive(at('/v1/jobs'), ['scoped=1; Path=/v1/jobs']);
    s.receive(at('/v1/jobs/create'), ['defaulted=1']);
    expect(s.cookieHeader(at('/v1/jobs/job_1'))).toBe('scoped=1; defaulted=1');
    expect(s.cookieHeader(at('/v1/jobs'))).toBe('scoped=1; defaulted=1');
    expect(s.cookieHeader(at('/v1/jobsx'))).toBeUndefined();
    expect(s.cookieHeader(at('/v2/jobs'))).toBeUndefined();
  });

  it('expires cookies by Expires and by Max-Age counted from arrival (reading a cookie never extends it); Max-Age=0 deletes', () => {
    const c = clock();
    const s = new ProviderSession(ORIGIN, { nowMs: c.now });
    s.receive(at('/'), [
      'short=1; Max-Age=10; Path=/',
      `dated=1; Expires=${new Date(c.now() + 20_000).toUTCString()}; Path=/`,
      'forever=1; Path=/',
    ]);
    expect(s.cookieHeader(at('/x'))).toBe('short=1; dated=1; forever=1');
    c.advance(9_000);
    expect(s.cookieHeader(at('/x'))).toContain('short=1');
    c.advance(2_000);
    expect(s.cookieHeader(at('/x'))).toBe('dated=1; forever=1');
    c.advance(10_000);
    expect(s.cookieHeader(at('/x'))).toBe('forever=1');
    s.receive(at('/'), ['forever=; Max-Age=0; Path=/']);
    expect(s.cookieHeader(at('/x'))).toBeUndefined();
    expect(JSON.parse(s.toJSON()).cookies).toEqual([]);
  });

  it('sends Secure cookies only to a secure context (https, or loopback), never over plain http elsewhere', () => {
    const plain = new ProviderSession('http://api.example.test');
    plain.receive(at('/', 'http://api.example.test'), ['sec=1; Secure; Path=/', 'open=1; Path=/']);
    expect(plain.cookieHeader(at('/', 'http://api.example.test'))).toBe('open=1');
    const tls = new ProviderSession('https://api.example.test');
    tls.receive(at('/', 'https://api.example.test'), ['sec=1; Secure; Path=/']);
    expect(tls.cookieHeader(at('/', 'https://api.example.test'))).toBe('sec=1');
  });

  it('a newer Set-Cookie replaces the value of the same cookie', () => {
    const s = new ProviderSession(ORIGIN);
    s.receive(at('/'), ['sid=one; Path=/']);
    s.receive(at('/'), ['sid=two; Path=/']);
    expect(s.cookieHeader(at('/'))).toBe('sid=two');
  });

  it('round-trips through its serialised form (the only thing stored) with expiry and scope intact; a read is not a change', () => {
    const c = clock();
    const s = new ProviderSession(ORIGIN, { nowMs: c.now });
    s.receive(at('/v1/jobs'), ['sid=abc; Path=/v1; Max-Age=60; HttpOnly', 'theme=dark; Path=/']);
    const text = s.toJSON();
    expect(JSON.parse(text)).toMatchObject({ v: 1, origin: ORIGIN });
    s.cookieHeader(at('/v1/jobs/1'));
    expect(s.toJSON()).toBe(text);
    c.advance(30_000);
    const back = ProviderSession.fromJSON(text, ORIGIN, { nowMs: c.now });
    expect(back.cookieHeader(at('/v1/jobs/1'))).toBe('sid=abc; theme=dark');
    expect(back.cookieHeader(at('/other'))).toBe('theme=dark');
    expect(back.toJSON()).toBe(text);
    c.advance(31_000);
    expect(back.cookieHeader(at('/v1/jobs/1'))).toBe('theme=dark');
  });

  it('a stored jar of another origin, or text that does not parse, gives an empty session', () => {
    const s = new ProviderSession(ORIGIN);
    s.receive(at('/'), ['sid=abc; Path=/']);
    const text = s.toJSON();
    expect(
      ProviderSession.fromJSON(text, 'http://127.0.0.1:9999').cookieHeader(at('/', 'http://127.0.0.1:9999')),
    ).toBeUndefined();
    expect(ProviderSession.fromJSON('{not json', ORIGIN).cookieHeader(at('/'))).toBeUndefined();
    expect(ProviderSession.fromJSON(null, ORIGIN).names()).toEqual([]);
    // Stored text claiming our origin cannot plant a cookie for another host: it is stored again through the RFC checks.
    const planted = JSON.stringify({
      v: 1,
      origin: ORIGIN,
      cookies: [{ key: 'x', value: '1', domain: 'evil.test', path: '/', hostOnly: false }],
    });
    expect(ProviderSession.fromJSON(planted, ORIGIN).names()).toEqual([]);
  });

  it('stays bounded: at most MAX_SESSION_COOKIES are kept (oldest dropped), and an oversized Set-Cookie is ignored', () => {
    const c = clock();
    const s = new ProviderSession(ORIGIN, { nowMs: c.now });
    for (let i = 0; i < MAX_SESSION_COOKIES + 5; i++) {
      s.receive(at('/'), [`c${i}=${i}; Path=/`]);
      c.advance(1);
    }
    s.receive(at('/'), [`huge=${'x'.repeat(9000)}; Path=/`]);
    const kept = JSON.parse(s.toJSON()).cookies as { key: string }[];
    expect(kept).toHaveLength(MAX_SESSION_COOKIES);
    expect(kept[0]!.key).toBe('c5');
    expect(kept.some((k) => k.key === 'huge')).toBe(false);
  });
});
