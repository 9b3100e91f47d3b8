/**
 * The audit key settings, read one way by the worker, `audit show`, `audit verify` and `audit checkpoint`
 * (one configuration). Each key is given as a file (`..._FILE`, preferred: kept out of the process
 * environment and shell history) or as a value; setting both is refused. Keys are never printed or logged: only
 * their public IDs are.
 *
 * | setting | what | read by |
 * |---|---|---|
 * | `ASYNCJOB_AUDIT_HMAC_KEY_FILE` / `ASYNCJOB_AUDIT_HMAC_KEY` | the HMAC-SHA256 key of the journal chain and snapshot hashes | worker, audit show/verify/checkpoint |
 * | `ASYNCJOB_AUDIT_SIGNING_KEY_FILE` / `ASYNCJOB_AUDIT_SIGNING_KEY` | an Ed25519 private key (PEM) signing checkpoints | audit checkpoint (and verify, which derives its public half) |
 * | `ASYNCJOB_AUDIT_VERIFY_KEY_FILE` / `ASYNCJOB_AUDIT_VERIFY_KEY` | the Ed25519 public key (PEM) checking checkpoints | audit verify |
 *
 * Without an Ed25519 signing key, checkpoints are signed with the HMAC key (`alg: hmac-sha256`).
 */
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { chainKeyOf, type ChainKey } from '../adapters/store/chain';
import { AsyncJobError } from '../core/errors';

/** The environment variable names of the audit keys. */
export const AUDIT_KEY_SETTINGS = {
  hmac: { file: 'ASYNCJOB_AUDIT_HMAC_KEY_FILE', value: 'ASYNCJOB_AUDIT_HMAC_KEY' },
  signing: { file: 'ASYNCJOB_AUDIT_SIGNING_KEY_FILE', value: 'ASYNCJOB_AUDIT_SIGNING_KEY' },
  verify: { file: 'ASYNCJOB_AUDIT_VERIFY_KEY_FILE', value: 'ASYNCJOB_AUDIT_VERIFY_KEY' },
} as const;

type Env = Readonly<Record<string, string | undefined>>;
type Setting = (typeof AUDIT_KEY_SETTINGS)[keyof typeof AUDIT_KEY_SETTINGS];

/** A key setting that cannot be used (both forms set, an unreadable or empty file, a malformed key). */
function keyError(message: string): AsyncJobError {
  return new AsyncJobError('ASYNCJOB_ERR_CONFIG_INVALID', message);
}

/** Reads a setting given as a file or a value (trimmed); undefined when neither is set. Never echoes the content. */
export async function readKeySetting(env: Env, setting: Setting): Promise<string | undefined> {
  const file = env[setting.file] || undefined;
  const value = env[setting.value] || undefined;
  if (file !== undefined && value !== undefined) throw keyError(`set ${setting.file} or ${setting.value}, not both`);
  if (value !== undefined) return value.trim() || undefined;
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw keyError(`${setting.file}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  const trimmed = text.trim();
  if (trimmed.length === 0) throw keyError(`${setting.file}: ${file} is empty`);
  return trimmed;
}

/** The chain HMAC key as the worker and every audit command read it (the one shared reader). */
export async function readChainKeySecret(env: Env): Promise<string | undefined> {
  return readKeySetting(env, AUDIT_KEY_SETTINGS.hmac);
}

/** The chain key with its public ID, or undefined. */
export async function readChainKey(env: Env): Promise<ChainKey | undefined> {
  return chainKeyOf(await readChainKeySecret(env));
}

/** The sentence every unverifiable signature is reported with (exit 2, never "the entry was changed"). */
export function keyNotConfigured(keyId: string | null, what: 'chain' | 'checkpoint'): string {
  const settings =
    what === 'chain'
      ? `${AUDIT_KEY_SETTINGS.hmac.file} or ${AUDIT_KEY_SETTINGS.hmac.value}`
      : `${AUDIT_KEY_SETTINGS.verify.file} (an Ed25519 public key), ${AUDIT_KEY_SETTINGS.signing.file}, or the HMAC key that signed it`;
  return `cannot verify signatures: key ${keyId ?? '(the row names none)'} not configured (set ${settings})`;
}

/** How checkpoints are signed. */
type SignatureAlg = 'ed25519' | 'hmac-sha256';

/** Signs checkpoint payloads. */
export interface CheckpointSigner {
  readonly alg: SignatureAlg;
  readonly keyId: string;
  /** Base64 signature of `data`. */
  sign(data: Buffer): string;
}

/** Checks checkpoint signatures with whichever configured key a checkpoint names. */
export interface CheckpointVerifier {
  /** The IDs of the configured keys. */
  readonly keyIds: readonly string[];
  /** null when no configured key has this ID; else whether the signature holds. */
  verify(keyId: string, alg: SignatureAlg, data: Buffer, signature: string): boolean | null;
}

/** The public ID of an Ed25519 key: `ed25519:` + 16 hex digits of SHA-256 over its SPKI DER form. */
function ed25519KeyId(publicKey: KeyObject): string {
  return `ed25519:${createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16)}`;
}

function parseKey(text: string, setting: string, kind: 'private' | 'public'): KeyObject {
  let key: KeyObject;
  try {
    key = kind === 'private' ? createPrivateKey(text) : createPublicKey(text);
  } catch {
    throw keyError(`${setting}: not a PEM ${kind} key`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw keyError(`${setting}: an Ed25519 key is required, found ${key.asymmetricKeyType ?? 'another kind'}`);
  return key;
}

function hmacSigner(chain: ChainKey): CheckpointSigner {
  return {
    alg: 'hmac-sha256',
    keyId: chain.id,
    sign: (data) => createHmac('sha256', chain.secret).update(data).digest('base64'),
  };
}

/** The checkpoint signer: the Ed25519 signing key when set, else the chain HMAC key, else undefined. */
export async function readCheckpointSigner(
  env: Env,
  chain: ChainKey | undefined,
): Promise<CheckpointSigner | undefined> {
  const pem = await readKeySetting(env, AUDIT_KEY_SETTINGS.signing);
  if (pem === undefined) return chain === undefined ? undefined : hmacSigner(chain);
  const privateKey = parseKey(pem, AUDIT_KEY_SETTINGS.signing.file, 'private');
  const keyId = ed25519KeyId(createPublicKey(privateKey));
  return { alg: 'ed25519', keyId, sign: (data) => sign(null, data, privateKey).toString('base64') };
}

/** Every configured key that can check checkpoints: the Ed25519 public key(s) and the chain HMAC key. */
export async function readCheckpointVerifier(env: Env, chain: ChainKey | undefined): Promise<CheckpointVerifier> {
  const publicKeys = new Map<string, KeyObject>();
  const verifyPem = await readKeySetting(env, AUDIT_KEY_SETTINGS.verify);
  if (verifyPem !== undefined) {
    const key = parseKey(verifyPem, AUDIT_KEY_SETTINGS.verify.file, 'public');
    publicKeys.set(ed25519KeyId(key), key);
  }
  const signingPem = await readKeySetting(env, AUDIT_KEY_SETTINGS.signing);
  if (signingPem !== undefined) {
    const key = createPublicKey(parseKey(signingPem, AUDIT_KEY_SETTINGS.signing.file, 'private'));
    publicKeys.set(ed25519KeyId(key), key);
  }
  return {
    keyIds: [...publicKeys.keys(), ...(chain ? [chain.id] : [])],
    verify(keyId, alg, data, signature) {
      const sig = Buffer.from(signature, 'base64');
      if (alg === 'ed25519') {
        const key = publicKeys.get(keyId);
        return key === undefined ? null : verify(null, data, key, sig);
      }
      if (chain === undefined || chain.id !== keyId) return null;
      const expected = createHmac('sha256', chain.secret).update(data).digest();
      return sig.length === expected.length && timingSafeEqual(sig, expected);
    },
  };
}
