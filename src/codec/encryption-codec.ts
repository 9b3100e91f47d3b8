/**
 * The payload codec: every payload asyncjob hands Temporal (workflow input, results, signals, updates, queries,
 * memo, activity arguments) is encrypted with AES-256-GCM before it leaves the process and decrypted when it comes
 * back, so Temporal's database and its history hold ciphertext. The format is the one of Temporal's samples
 * (`encryption/src/encryption-codec.ts`): metadata `encoding: binary/encrypted` and `encryption-key-id: ID`, data
 * the 12-byte IV, then the ciphertext of the whole original payload (protobuf), then the 16-byte tag.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AsyncJobError } from '../core/errors';
import { decodePayload, encodePayload } from './payload-proto';

/** The `encoding` metadata of an encrypted payload. */
const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata entry naming the key a payload is encrypted with. */
const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** AES-256: a key is exactly this many bytes. */
export const KEY_BYTES = 32;

/** One key: its ID (written into each payload it encrypts) and its 32 bytes. */
export interface PayloadKey {
  readonly keyId: string;
  readonly key: Uint8Array;
}

/** A payload is encrypted under a key ID this process does not hold (ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN). */
export class PayloadKeyUnknownError extends AsyncJobError {
  constructor(readonly keyId: string) {
    super(
      'ASYNCJOB_ERR_PAYLOAD_KEY_UNKNOWN',
      `a payload is encrypted with key ${JSON.stringify(keyId)}, which ASYNCJOB_PAYLOAD_KEYS does not list here`,
    );
  }
}

/** An encrypted payload does not decrypt under its key (ASYNCJOB_ERR_PAYLOAD_UNDECRYPTABLE). */
export class PayloadUndecryptableError extends AsyncJobError {
  constructor(
    readonly keyId: string,
    options?: { cause?: unknown },
  ) {
    super(
      'ASYNCJOB_ERR_PAYLOAD_UNDECRYPTABLE',
      `a payload encrypted with key ${JSON.stringify(keyId)} does not decrypt: altered, or another key under that ID`,
      options,
    );
  }
}

const text = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? []).toString('utf8');

/**
 * AES-256-GCM over whole payloads with key rotation: the first key encrypts, every key decrypts (by the key ID in
 * the payload), and a payload that is not encrypted (written before encryption was turned on) passes through. With
 * `writesPlain`, nothing is encrypted and every key only decrypts: the step that turns encryption on while some
 * processes do not hold the key yet. Safe to share; each encryption draws a fresh random IV.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Uint8Array>;
  private readonly encrypting: PayloadKey | undefined;

  /**
   * `keys` in order, the first the one that encrypts unless `writesPlain`. Throws `Error` for no key or a key not
   * 32 bytes long.
   */
  constructor(keys: readonly PayloadKey[], options: { writesPlain?: boolean } = {}) {
    if (keys.length === 0) throw new Error('EncryptionCodec needs at least one key');
    for (const { keyId, key } of keys)
      if (key.length !== KEY_BYTES) throw new Error(`payload key ${keyId} is ${key.length} bytes, not ${KEY_BYTES}`);
    this.keys = new Map(keys.map((k) => [k.keyId, k.key]));
    this.encrypting = options.writesPlain ? undefined : keys[0]!;
  }

  /** The ID of the key new payloads are encrypted with; undefined when they are written in plain text. */
  get encryptingKeyId(): string | undefined {
    return this.encrypting?.keyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const encrypting = this.encrypting;
    if (encrypting === undefined) return payloads;
    return payloads.map((payload) => this.encrypt(payload, encrypting));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  private encrypt(payload: Payload, encrypting: PayloadKey): Payload {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', encrypting.key, iv);
    const ciphertext = Buffer.concat([cipher.update(encodePayload(payload)), cipher.final()]);
    return {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from(encrypting.keyId),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  private decrypt(payload: Payload): Payload {
    if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
    const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
    const key = this.keys.get(keyId);
    if (key === undefined) throw new PayloadKeyUnknownError(keyId);
    const data = Buffer.from(payload.data ?? []);
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadUndecryptableError(keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plaintext = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return decodePayload(plaintext);
    } catch (err) {
      throw new PayloadUndecryptableError(keyId, { cause: err });
    }
  }
}
