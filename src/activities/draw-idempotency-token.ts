/**
 * The idempotency token of an operation started from workflow code (a child of a user's workflow), which has no
 * source of fresh randomness: drawn here from `node:crypto` (I1: 256 bits, base64url). Run as a local activity
 * before anything is recorded; its answer is in the operation's history, so a replay reads the same token.
 */
import { randomBytes } from 'node:crypto';
import { newIdempotencyToken } from '../core/fingerprint';

/** Returns a fresh token of 32 random bytes for the operation named (the name is for the activity's logs). */
export function drawIdempotencyToken(): (input: { operationId: string }) => Promise<string> {
  return async () => {
    const made = newIdempotencyToken(randomBytes(32));
    if (made.kind !== 'ok') throw new Error(made.message);
    return made.token;
  };
}
