/**
 * SHA-256 for fingerprints and digests computed in core code, which may run in workflow code (no `node:crypto`
 * there): the audited `@noble/hashes` implementation, pure JavaScript and deterministic. Text is hashed as its
 * UTF-8 bytes from `TextEncoder` (global in Node and in Temporal's workflow sandbox), where a lone surrogate
 * becomes U+FFFD (`EF BF BD`). Large artifacts are hashed by activities with `node:crypto` instead.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const UTF8 = new TextEncoder();

/** Returns the lower-case hex SHA-256 of `data`. */
export function sha256Hex(data: Uint8Array): string {
  return bytesToHex(sha256(data));
}

/** Returns the lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256HexOfText(text: string): string {
  return sha256Hex(UTF8.encode(text));
}
