/**
 * Encrypted payloads: the keys every process that talks to Temporal encrypts and decrypts payloads with
 * (`src/codec/`), and `asyncjob codec-server`'s token and the Web UI origins it answers.
 */
import { nonEmpty, setting } from './setting';

/** Where one payload key lives: `env:NAME` (a variable holding it) or `file:PATH` (a file holding it). */
interface PayloadKeyReference {
  /** The key ID written into every payload encrypted with the key (`encryption-key-id`). */
  readonly keyId: string;
  readonly secretEnv?: string;
  readonly secretFile?: string;
}

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A secret reference as the settings write it: `env:NAME` or `file:PATH`; undefined for anything else. Pure. */
export function parseSecretReference(text: string): { secretEnv: string } | { secretFile: string } | undefined {
  const match = /^(env|file):(.+)$/.exec(text.trim());
  if (!match) return undefined;
  const [, kind, where] = match;
  if (kind === 'env') return /^[A-Za-z_][A-Za-z0-9_]*$/.test(where!) ? { secretEnv: where! } : undefined;
  return { secretFile: where! };
}

/** The first entry of ASYNCJOB_PAYLOAD_KEYS that writes new payloads in plain text (the decrypt-only rollout step). */
const PLAIN_ENTRY = 'plain';

/** ASYNCJOB_PAYLOAD_KEYS read: the keys in order, and whether new payloads are written in plain text. */
export interface PayloadKeysSetting {
  readonly keys: PayloadKeyReference[];
  /** `plain` was the first entry: nothing is encrypted, every key only decrypts. */
  readonly writesPlain: boolean;
}

/**
 * Reads ASYNCJOB_PAYLOAD_KEYS: `ID=env:NAME` or `ID=file:PATH` entries separated by commas, the first the key that
 * encrypts, every one a key that decrypts; or `plain` first, then at least one key: new payloads are written in
 * plain text and the keys only decrypt (turning encryption on while not every process holds the key yet). Returns
 * the references in order, or every problem found. Pure.
 */
export function parsePayloadKeys(text: string): PayloadKeysSetting | { problems: string[] } {
  const keys: PayloadKeyReference[] = [];
  const problems: string[] = [];
  const entries = text.split(',').map((e) => e.trim());
  const writesPlain = entries[0] === PLAIN_ENTRY;
  for (const [index, entry] of entries.entries()) {
    if (entry === PLAIN_ENTRY) {
      if (index > 0) problems.push(`"${PLAIN_ENTRY}" is only allowed as the first entry`);
      continue;
    }
    const equals = entry.indexOf('=');
    const keyId = equals < 0 ? entry : entry.slice(0, equals).trim();
    const reference = equals < 0 ? undefined : parseSecretReference(entry.slice(equals + 1));
    if (!KEY_ID.test(keyId)) problems.push(`"${entry}": a key ID is 1-64 letters, digits, ".", "_" or "-"`);
    else if (reference === undefined) problems.push(`"${entry}": write ${keyId}=env:NAME or ${keyId}=file:PATH`);
    else if (keys.some((k) => k.keyId === keyId)) problems.push(`key ID ${keyId} is listed twice`);
    else keys.push({ keyId, ...reference });
  }
  if (writesPlain && entries.length === 1)
    problems.push(`"${PLAIN_ENTRY}" needs at least one key after it (the keys that decrypt)`);
  return problems.length > 0 ? { problems } : { keys, writesPlain };
}

/** The payload keys: read by every process that connects to Temporal. */
export const payloadKeySettings = {
  ASYNCJOB_PAYLOAD_KEYS: setting(
    nonEmpty()
      .optional()
      .superRefine((text, ctx) => {
        if (text === undefined) return;
        const parsed = parsePayloadKeys(text);
        if ('problems' in parsed) for (const message of parsed.problems) ctx.addIssue({ code: 'custom', message });
      }),
    {
      group: 'payloads',
      usedBy: ['worker', 'client', 'CLI', 'mcp', 'audit', 'replay-check', 'demo', 'codec-server'],
      description:
        'the keys payloads are encrypted with (AES-256-GCM, docs/operating.md#encrypted-payloads-and-the-codec-server): `ID=env:NAME` or `ID=file:PATH`, comma-separated; the first encrypts, all decrypt (`plain` as the first entry: nothing is encrypted, the keys after it only decrypt, for turning encryption on across a running fleet). A key is 32 bytes written as 64 hex digits or in base64; payloads written without encryption still read',
      example: 'k2=file:/run/secrets/payload-k2,k1=env:ASYNCJOB_PAYLOAD_KEY_1',
      whenUnset: 'payloads are not encrypted (encrypted ones cannot be read)',
    },
  ),
};

/** `asyncjob codec-server`: who may call it, and which Web UI pages may. */
export const codecServerSettings = {
  ASYNCJOB_CODEC_SERVER_TOKEN: setting(
    nonEmpty()
      .optional()
      .refine((text) => text === undefined || parseSecretReference(text) !== undefined, {
        message: 'write env:NAME or file:PATH',
      }),
    {
      group: 'payloads',
      usedBy: ['codec-server'],
      description:
        'where the bearer token `asyncjob codec-server` requires lives, `env:NAME` or `file:PATH`; each request must send `Authorization: Bearer TOKEN`',
      example: 'file:/run/secrets/codec-server-token',
      whenUnset: 'no token: the codec server starts only on a loopback address, and refuses the origin `*`',
    },
  ),
  ASYNCJOB_CODEC_SERVER_ORIGINS: setting(nonEmpty().default('http://localhost:8233,http://127.0.0.1:8233'), {
    group: 'payloads',
    usedBy: ['codec-server'],
    description:
      "the Web UI origins (scheme, host and port, comma-separated) whose pages may call `asyncjob codec-server` (CORS); `*` allows any page (without the UI's cookies), and only with ASYNCJOB_CODEC_SERVER_TOKEN set",
    example: 'https://temporal-ui.internal',
  }),
};
