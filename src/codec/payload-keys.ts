/**
 * The payload keys of this process, read from ASYNCJOB_PAYLOAD_KEYS (`src/config/payloads.ts`): each key by its
 * reference (a variable or a file, the `env:`/`file:` references of the provider credentials), read once at start.
 * Loaded by the client too, so it reads references itself rather than through the HTTP adapters. A key is 32 bytes,
 * written as 64 hex digits or in base64 (44 characters, as `openssl rand -base64 32` writes it); anything else is
 * refused naming the key ID, never showing the value.
 */
import type { PayloadCodec } from '@temporalio/common';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../config';
import { parsePayloadKeys } from '../config/payloads';
import { EncryptionCodec, KEY_BYTES, type PayloadKey } from './encryption-codec';

/** The 32 bytes a key's text stands for, or undefined when it is neither 64 hex digits nor base64 of 32 bytes. */
export function keyBytes(text: string): Uint8Array | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === KEY_BYTES ? bytes : undefined;
}

/**
 * The text a secret reference (`env:NAME`, `file:PATH`) holds, trimmed. Throws `Error` saying why it cannot be had,
 * naming the variable or file, never a value.
 */
export async function readReference(
  reference: { secretEnv?: string; secretFile?: string },
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (reference.secretEnv !== undefined) {
    const value = env[reference.secretEnv]?.trim();
    if (!value) throw new Error(`environment variable ${reference.secretEnv} is not set`);
    return value;
  }
  try {
    const value = (await readFile(reference.secretFile!, 'utf8')).trim();
    if (value === '') throw new Error(`file ${reference.secretFile} is empty`);
    return value;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw code ? new Error(`file ${reference.secretFile} cannot be read (${code})`) : err;
  }
}

/** What {@link loadPayloadCodecs} read: the codecs for a data converter, and the key texts a logger must redact. */
export interface LoadedPayloadCodecs {
  /** `[codec]` when ASYNCJOB_PAYLOAD_KEYS is set, else empty (payloads stay plaintext). */
  payloadCodecs: PayloadCodec[];
  /** The keys as written (secret: for a logger's redaction, never to print). */
  secretValues: string[];
  /** The ID of the key new payloads are encrypted with; undefined when none is, or with `plain` first. */
  encryptingKeyId?: string;
}

/**
 * Reads ASYNCJOB_PAYLOAD_KEYS from `env` and every key it names. Throws {@link ConfigError} listing every key that
 * cannot be read or is not 32 bytes (exit 2). Not encrypting when the variable is unset, nor with `plain` first
 * (then the keys only decrypt).
 */
export async function loadPayloadCodecs(env: NodeJS.ProcessEnv): Promise<LoadedPayloadCodecs> {
  const setting = env.ASYNCJOB_PAYLOAD_KEYS?.trim();
  if (!setting) return { payloadCodecs: [], secretValues: [] };
  const parsed = parsePayloadKeys(setting);
  if ('problems' in parsed) throw new ConfigError(parsed.problems.map((p) => `ASYNCJOB_PAYLOAD_KEYS: ${p}`));
  const problems: string[] = [];
  const keys: PayloadKey[] = [];
  const secretValues: string[] = [];
  for (const reference of parsed.keys) {
    let value: string;
    try {
      value = await readReference(reference, env);
    } catch (err) {
      problems.push(`ASYNCJOB_PAYLOAD_KEYS: key ${reference.keyId}: ${(err as Error).message}`);
      continue;
    }
    secretValues.push(value);
    const key = keyBytes(value);
    if (key === undefined)
      problems.push(
        `ASYNCJOB_PAYLOAD_KEYS: key ${reference.keyId} is not ${KEY_BYTES} bytes written as 64 hex digits or in base64`,
      );
    else keys.push({ keyId: reference.keyId, key });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const codec = new EncryptionCodec(keys, { writesPlain: parsed.writesPlain });
  return { payloadCodecs: [codec], secretValues, encryptingKeyId: codec.encryptingKeyId };
}
