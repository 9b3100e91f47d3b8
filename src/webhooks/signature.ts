/**
 * Webhook signature verification (W1): `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
 * with a timestamp tolerance against replays and a constant-time comparison. Several `v1=` values are accepted
 * (providers send two during a secret rotation).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a webhook was refused; stable strings for logs, metrics and the HTTP answer. */
type SignatureRefusal = 'missing_signature' | 'malformed_signature' | 'stale_timestamp' | 'bad_signature';

/** The result of a verification. */
export type SignatureCheck = { kind: 'valid'; timestampMs: number } | { kind: 'refused'; reason: SignatureRefusal };

/** Options for {@link verifyWebhookSignature}. */
export interface VerifyOptions {
  /** The raw `X-Signature` header value. */
  header: string | undefined;
  /** The raw request body, exactly as received. */
  rawBody: Buffer;
  secret: string;
  nowMs: number;
  /** How far the timestamp may be from now, either way. */
  toleranceMs: number;
}

/** Computes the hex signature of a body at a timestamp (what a provider does; used by tests and the simulator). */
export function signWebhook(secret: string, timestampSeconds: number, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
}

/** Verifies a webhook's signature; never throws for bad input. */
export function verifyWebhookSignature(options: VerifyOptions): SignatureCheck {
  if (!options.header) return { kind: 'refused', reason: 'missing_signature' };
  let timestamp: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of options.header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) candidates.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || candidates.length === 0) return { kind: 'refused', reason: 'malformed_signature' };
  const timestampMs = timestamp * 1000;
  if (Math.abs(options.nowMs - timestampMs) > options.toleranceMs)
    return { kind: 'refused', reason: 'stale_timestamp' };
  const expected = Buffer.from(signWebhook(options.secret, timestamp, options.rawBody), 'hex');
  // Compare against every candidate so the time taken does not depend on which one matched.
  let matched = false;
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched ? { kind: 'valid', timestampMs } : { kind: 'refused', reason: 'bad_signature' };
}
