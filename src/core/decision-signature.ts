/**
 * Signed decisions (D3): a decider signs the canonical decision (the operation, the escalation, the option, its
 * bounds, the decider, the reason and the signing time) with an Ed25519 key whose public half is in the decider
 * policy. The workflow verifies it deterministically and journals it; `asyncjob audit verify` verifies it again.
 * The audited `@noble/curves` implementation, pure JavaScript: safe in workflow code.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { canonicalJson } from './canonical-json';
import { lazySchema } from './lazy-schema';

/** How far a signing time may be ahead of the workflow's clock, or before the escalation was raised. */
export const SIGNATURE_CLOCK_SKEW_MS = 5 * 60_000;

/** A signature as a decision carries it and the journal records it. Not a secret. */
export const decisionSignatureSchema = lazySchema(() =>
  z
    .object({
      /** The public key that verifies it: `ed25519:` and 64 hex characters. */
      keyId: z.string().regex(/^ed25519:[0-9a-f]{64}$/, 'must be ed25519: and 64 lowercase hex characters'),
      /** When it was signed (ISO-8601 UTC). */
      signedAt: z.iso.datetime({ offset: false }),
      /** The Ed25519 signature, 128 lowercase hex characters. */
      value: z.string().regex(/^[0-9a-f]{128}$/, 'must be 128 lowercase hex characters'),
    })
    .strict(),
);
/** A decision signature. */
export type DecisionSignature = z.infer<typeof decisionSignatureSchema>;

/** What a signature covers. `bounds` holds only the bounds the decision names. */
export interface SignedDecisionFields {
  operationId: string;
  /** The escalation's ID (the journal sequence of its escalation entry): a signature never answers another. */
  escalationId: number;
  option: string;
  bounds: Record<string, number | string>;
  /** Canonical identity. */
  decider: string;
  reason: string;
  signedAt: string;
}

const UTF8 = new TextEncoder();

/** The exact bytes signed: canonical JSON of the fields under a purpose tag, so no other message can be replayed. */
function signedDecisionBytes(fields: SignedDecisionFields): Uint8Array {
  return UTF8.encode(canonicalJson({ purpose: 'asyncjob.decision/v1', ...fields }));
}

/** The public key of a secret key, as policies hold it. */
export function keyIdOf(secretKeyHex: string): string {
  return `ed25519:${bytesToHex(ed25519.getPublicKey(hexToBytes(secretKeyHex)))}`;
}

/** Signs `fields` (Ed25519 signing is deterministic). */
export function signDecision(secretKeyHex: string, fields: SignedDecisionFields): DecisionSignature {
  const value = bytesToHex(ed25519.sign(signedDecisionBytes(fields), hexToBytes(secretKeyHex)));
  return { keyId: keyIdOf(secretKeyHex), signedAt: fields.signedAt, value };
}

/** The result of {@link verifyDecisionSignature}. */
export type SignatureCheck = { kind: 'verified' } | { kind: 'invalid'; message: string };

/**
 * Verifies a signature over `fields` with its key, which must be one of `keys` (the decider's keys in the policy).
 * Never throws: a malformed key or signature is `invalid` with a reason.
 */
export function verifyDecisionSignature(
  signature: DecisionSignature,
  fields: Omit<SignedDecisionFields, 'signedAt'>,
  keys: readonly string[],
): SignatureCheck {
  if (!keys.includes(signature.keyId))
    return {
      kind: 'invalid',
      message:
        keys.length === 0
          ? `the decider policy holds no key for ${fields.decider}`
          : `key ${signature.keyId.slice(0, 20)}… is not one of ${fields.decider}'s keys in the decider policy`,
    };
  try {
    const bytes = signedDecisionBytes({ ...fields, signedAt: signature.signedAt });
    const ok = ed25519.verify(hexToBytes(signature.value), bytes, hexToBytes(signature.keyId.slice('ed25519:'.length)));
    return ok
      ? { kind: 'verified' }
      : {
          kind: 'invalid',
          message: 'the signature does not match this decision (a changed field or another escalation)',
        };
  } catch (err) {
    return { kind: 'invalid', message: `the signature cannot be checked: ${(err as Error).message}` };
  }
}
