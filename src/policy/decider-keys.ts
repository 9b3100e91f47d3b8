/**
 * A decider's signing keys, on the decider's side (D3): `asyncjob keys new` makes an Ed25519 key pair and writes
 * the secret half to a key file only its owner can read; `asyncjob decide --sign` (or `--key FILE`) reads it back
 * and signs the decision. The public half goes into the decider policy (`deciders.keys`), which the workers read.
 * A decider's key file is found under the keys directory (ASYNCJOB_DECIDER_KEYS_DIR) by a hash of the canonical
 * identity, so no identity ever becomes a path as written. A secret key is never printed, logged, serialised or
 * put in an error message: {@link DeciderKey} keeps it in a private field.
 */
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { z } from 'zod';
import { parseActor } from '../core/actor';
import { publicKeySchema } from '../core/decider-policy';
import { decisionBounds } from '../core/decision-check';
import { keyIdOf, signDecision } from '../core/decision-signature';
import { AsyncJobError } from '../core/errors';
import { type Decision, decisionSchema, type OpenEscalation } from '../core/escalation';
import { issueText } from '../core/issues';
import { sha256HexOfText } from '../core/sha256';

/** The environment the keys directory is found from. */
type Env = Readonly<Record<string, string | undefined>>;

/**
 * A key file cannot be written, read or used (`ASYNCJOB_ERR_INVALID_INPUT`, exit 2; nothing was sent). The
 * message names the file and why, never the key.
 */
export class DeciderKeyError extends AsyncJobError {
  constructor(
    readonly file: string,
    reason: string,
    /** The file does not exist. */
    readonly missing = false,
  ) {
    super('ASYNCJOB_ERR_INVALID_INPUT', `key file ${file}: ${reason}`);
  }
}

/** An identity in canonical form, or as given when it is none (for a message). */
function canonicalOrAsGiven(identity: string): string {
  const parsed = parseActor(identity);
  return parsed.kind === 'ok' ? parsed.actor.id : identity;
}

/** A key file as written: JSON, one decider, one key pair (the public half derived from the secret). */
const keyFileSchema = z
  .object({
    version: z.literal(1),
    /** The decider's canonical identity. */
    for: z.string(),
    /** The public key, as the policy lists it. */
    keyId: publicKeySchema,
    /** The Ed25519 secret key (its 32-byte seed), lowercase hex. */
    secretKey: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'),
  })
  .strict();

/** One decider's key pair. The secret half stays in a private field: it is in no property, JSON or inspection. */
export class DeciderKey {
  readonly #secretKeyHex: string;
  /** The public key, `ed25519:` and 64 hex characters, as `deciders.keys` lists it. */
  readonly keyId: string;

  private constructor(
    /** The decider's canonical identity. */
    readonly decider: string,
    secretKeyHex: string,
  ) {
    this.#secretKeyHex = secretKeyHex;
    this.keyId = keyIdOf(secretKeyHex);
  }

  /** A new key pair for `decider` (a canonical identity), from the platform's secure random source. */
  static generate(decider: string): DeciderKey {
    return new DeciderKey(decider, bytesToHex(ed25519.keygen().secretKey));
  }

  /** Reads and checks a key file; throws {@link DeciderKeyError} naming the file and the problem. */
  static async read(file: string): Promise<DeciderKey> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
      // As ssh does for its private keys: a key others can read may be someone else's signature.
      const { mode } = await stat(file);
      if (process.platform !== 'win32' && (mode & 0o077) !== 0)
        throw new DeciderKeyError(
          file,
          `can be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 ${file} and keep it yours`,
        );
    } catch (err) {
      if (err instanceof DeciderKeyError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new DeciderKeyError(file, 'no such file', true);
      throw new DeciderKeyError(file, `cannot be read (${code ?? 'error'})`);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      // JSON.parse quotes the text near a fault, which may be the secret key: say only that it is not JSON.
      throw new DeciderKeyError(file, 'not JSON (asyncjob keys new writes it)');
    }
    const parsed = keyFileSchema.safeParse(document);
    if (!parsed.success) throw new DeciderKeyError(file, `not a key file: ${issueText(parsed.error.issues, '(file)')}`);
    const identity = parseActor(parsed.data.for);
    if (identity.kind === 'invalid' || identity.actor.id !== parsed.data.for)
      throw new DeciderKeyError(file, `"for" is not a canonical identity`);
    const key = new DeciderKey(identity.actor.id, parsed.data.secretKey);
    if (key.keyId !== parsed.data.keyId)
      throw new DeciderKeyError(file, `keyId ${parsed.data.keyId} is not the public half of its secret key`);
    return key;
  }

  /** Reads a key file ({@link read}) that must be `decider`'s (any spelling of it); another's is refused. */
  static async readFor(file: string, decider: string): Promise<DeciderKey> {
    let key: DeciderKey;
    try {
      key = await DeciderKey.read(file);
    } catch (err) {
      if (!(err instanceof DeciderKeyError && err.missing)) throw err;
      const who = canonicalOrAsGiven(decider);
      throw new DeciderKeyError(
        file,
        `no such file: "asyncjob keys new --for ${who}" makes ${who}'s key there, or name a key file with --key FILE`,
        true,
      );
    }
    key.refuseOther(file, decider);
    return key;
  }

  /** Refuses a decider other than this key's, compared in canonical form (D1). */
  private refuseOther(file: string, decider: string): void {
    const canonical = canonicalOrAsGiven(decider);
    if (canonical !== this.decider)
      throw new DeciderKeyError(file, `holds the key of ${this.decider}, not of ${canonical} (--by)`);
  }

  /**
   * Writes the key file, readable and writable by its owner alone (0600), in a directory created 0700 when
   * missing. Never replaces a file: an existing one is refused ({@link DeciderKeyError}), as it may be a key in use.
   */
  async write(file: string): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    let handle;
    try {
      handle = await open(file, 'wx', 0o600);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new DeciderKeyError(
        file,
        code === 'EEXIST'
          ? 'exists already, and a key file is never overwritten: to make a new key, move this one away first (keep it while operations started under a policy with its key run) or give --out FILE'
          : `cannot be written (${code ?? 'error'})`,
      );
    }
    try {
      // The mode given to open is narrowed by the umask; a key file is exactly 0600 whatever the umask.
      await handle.chmod(0o600);
      const document = { version: 1, for: this.decider, keyId: this.keyId, secretKey: this.#secretKeyHex };
      await handle.writeFile(`${JSON.stringify(document, null, 2)}\n`);
    } finally {
      await handle.close();
    }
  }

  /**
   * The decision as `asyncjob decide` sends it signed with this key (D3): declared route `cli`, the decider and
   * reason in the canonical form the workflow checks, and the signature over the operation, the open
   * escalation's ID, the option, its bounds, the decider, the reason and `nowMs`. Refuses a decision by another
   * decider than this key's ({@link DeciderKeyError}) and an escalation without an ID to sign
   * (`ASYNCJOB_ERR_SIGNATURE_INVALID`, an escalation raised by an older worker).
   */
  signedDecision(
    file: string,
    request: { operationId: string; escalation: OpenEscalation; decision: Decision; nowMs: number },
  ): Decision {
    const parsed = decisionSchema.safeParse(request.decision);
    if (!parsed.success)
      throw new AsyncJobError('ASYNCJOB_ERR_INVALID_INPUT', `invalid decision: ${issueText(parsed.error.issues)}`);
    const decision = parsed.data;
    this.refuseOther(file, decision.approvedBy);
    const escalationId = request.escalation.id;
    if (escalationId === undefined)
      throw new AsyncJobError(
        'ASYNCJOB_ERR_SIGNATURE_INVALID',
        `the open escalation of ${request.operationId} has no ID to sign (it was raised by an older worker); decide without signing`,
      );
    const signature = signDecision(this.#secretKeyHex, {
      operationId: request.operationId,
      escalationId,
      option: decision.option,
      bounds: decisionBounds(decision),
      decider: decision.approvedBy,
      reason: decision.reason,
      signedAt: new Date(request.nowMs).toISOString(),
    });
    return { ...decision, route: 'cli', signature };
  }

  /** Only what may be shown: the decider and the public key. */
  toJSON(): { decider: string; keyId: string } {
    return { decider: this.decider, keyId: this.keyId };
  }
}

/**
 * Where deciders' key files are kept: ASYNCJOB_DECIDER_KEYS_DIR, else `asyncjob/keys` under the XDG configuration
 * directory (`$XDG_CONFIG_HOME`, absolute, else `~/.config`).
 */
export function deciderKeysDir(env: Env): string {
  const configured = env.ASYNCJOB_DECIDER_KEYS_DIR;
  if (configured !== undefined && configured.trim() !== '') return path.resolve(configured);
  const xdg = env.XDG_CONFIG_HOME;
  const config = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config');
  return path.join(config, 'asyncjob', 'keys');
}

/**
 * The key file of `decider` (a canonical identity) in the keys directory: named by the first 32 hex characters of
 * the SHA-256 of the identity, so that an identity never becomes a path as written.
 */
export function deciderKeyFile(env: Env, decider: string): string {
  return path.join(deciderKeysDir(env), `${sha256HexOfText(decider).slice(0, 32)}.json`);
}

/** A YAML mapping key for an identity: as written when plain, else double-quoted (JSON is valid YAML). */
function yamlKey(identity: string): string {
  return /^[a-z0-9][a-z0-9._@+-]*$/.test(identity) ? identity : JSON.stringify(identity);
}

/** The lines of a policy file's `deciders` section that list `key` for its decider (YAML, as pasted). */
export function policyKeyLines(key: DeciderKey): string[] {
  return ['deciders:', '  keys:', `    ${yamlKey(key.decider)}: [${key.keyId}]`];
}
