/**
 * Request fingerprints and idempotency tokens (C1, I1, I2). A fingerprint is
 * `'sha256:' + hex(sha256(utf8(canonicalJson(request))))`, so key order, `1.0` versus `1`, `-0` versus `0`
 * and NFC versus NFD spellings of the same text give the same fingerprint on every machine (see
 * `canonical-json.ts` for the exact rules). Pure and deterministic: safe in workflow code.
 */
import { canonicalJson } from './canonical-json';
import { sha256HexOfText } from './sha256';

/** Minimum random bytes in an idempotency token: 16 bytes = 128 bits (I1). */
const MIN_TOKEN_BYTES = 16;

/** Returns the request fingerprint `sha256:<64 hex>`; throws `CanonicalJsonError` for a value canonical JSON refuses. */
export function requestFingerprint(request: unknown): string {
  return `sha256:${sha256HexOfText(canonicalJson(request))}`;
}

/**
 * The fingerprint of a start request (I2): of its payload alone when it gives no operation variables, else of the
 * pair `[payload, variables]`. A payload is always a JSON object, so the pair (an array) never fingerprints like
 * any payload, and a start without variables keeps the fingerprint it always had. The variables are taken as
 * given, before the adapter's defaults: giving a default's value and leaving it out are different requests.
 */
export function startFingerprint(payload: Record<string, unknown>, variables?: Record<string, string>): string {
  return variables === undefined || Object.keys(variables).length === 0
    ? requestFingerprint(payload)
    : requestFingerprint([payload, variables]);
}

/** The result of {@link newIdempotencyToken}. */
export type TokenResult =
  { kind: 'ok'; token: string } | { kind: 'refused'; code: 'ASYNCJOB_ERR_INSUFFICIENT_ENTROPY'; message: string };

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Base64url without padding (RFC 4648 section 5). */
export function base64Url(bytes: Uint8Array): string {
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += 3) {
    const first = bytes[offset]!;
    const second = bytes[offset + 1];
    const third = bytes[offset + 2];
    text += B64URL[first >> 2]!;
    text += B64URL[((first & 3) << 4) | ((second ?? 0) >> 4)]!;
    if (second !== undefined) text += B64URL[((second & 15) << 2) | ((third ?? 0) >> 6)]!;
    if (third !== undefined) text += B64URL[third & 63]!;
  }
  return text;
}

/**
 * Builds an idempotency token from random bytes the caller drew (the workflow's seeded `uuid4`-style source or
 * `crypto.randomBytes` in an activity). Refuses fewer than {@link MIN_TOKEN_BYTES} bytes (I1). The token is the
 * base64url text of the bytes: 16 bytes give 22 characters, safe in headers and JSON bodies.
 */
export function newIdempotencyToken(randomBytes: Uint8Array): TokenResult {
  if (randomBytes.length < MIN_TOKEN_BYTES) {
    return {
      kind: 'refused',
      code: 'ASYNCJOB_ERR_INSUFFICIENT_ENTROPY',
      message: `randomBytes: ${randomBytes.length} bytes given, at least ${MIN_TOKEN_BYTES} (128 bits) needed`,
    };
  }
  return { kind: 'ok', token: base64Url(randomBytes) };
}

/** The digest recorded instead of a token where the token itself must not be shown: `sha256:<hex>`. */
export function tokenDigest(token: string): string {
  return `sha256:${sha256HexOfText(token)}`;
}

/** The result of {@link checkFingerprint}. */
export type FingerprintCheck =
  | { kind: 'ok' }
  | { kind: 'refused'; code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH'; existing: string; incoming: string; message: string };

/**
 * I2: a request presented under an existing operation ID or idempotency token must have the recorded
 * fingerprint. A changed request is a new operation with a new token, never a silent reuse.
 */
export function checkFingerprint(existing: string, incoming: string): FingerprintCheck {
  if (existing === incoming) return { kind: 'ok' };
  return {
    kind: 'refused',
    code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH',
    existing,
    incoming,
    message:
      `requestFingerprint: the request differs from the one recorded (${existing}, now ${incoming}); ` +
      'a changed request needs a new operation ID and a new idempotency token',
  };
}
