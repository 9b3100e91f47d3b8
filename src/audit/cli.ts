/**
 * `asyncjob audit`: verify the hash chains of the operation record and show an operation's story.
 *
 *   asyncjob audit verify [--operation ID] [--json] [--store LOCATION]
 *   asyncjob audit show ID [--json] [--store LOCATION]
 *
 * The store is `--store`, else `ASYNCJOB_STORE`, else `sqlite:.asyncjob/asyncjob.db`; an HMAC chain key comes from
 * `ASYNCJOB_AUDIT_HMAC_KEY` (never from the command line, where it would land in shell history).
 * Exit codes: 0 ok, 1 a broken chain was found, 2 usage error or bad input (unknown operation, unreadable store).
 */
import { type OperationStore } from '../adapters/store/operation-store';
import { DEFAULT_STORE_LOCATION, openStore } from '../adapters/store/open-store';
import { isStoreError } from '../adapters/store/store-errors';
import { formatStoryText, renderStory, storyJson } from './story';
import { formatVerifyText, verifyJson } from './verify';

/** Where the command writes and what environment it reads. Defaults: the process's. */
export interface AuditIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The exit codes of `asyncjob audit`. */
export const AUDIT_EXIT = { ok: 0, brokenChain: 1, usage: 2 } as const;

/** The usage text. */
export const AUDIT_USAGE = `usage:
  asyncjob audit verify [--operation ID] [--json] [--store LOCATION]
  asyncjob audit show ID [--json] [--store LOCATION]

LOCATION is sqlite:PATH or postgres://... (default: $ASYNCJOB_STORE, else ${DEFAULT_STORE_LOCATION}).
An HMAC chain key is read from $ASYNCJOB_AUDIT_HMAC_KEY.
exit codes: 0 ok, 1 broken chain found, 2 usage error or bad input
`;

interface ParsedArgs {
  readonly command: 'verify' | 'show';
  readonly operationId: string | undefined;
  readonly json: boolean;
  readonly store: string | undefined;
}

class UsageError extends Error {}

function parseArgs(argv: readonly string[]): ParsedArgs | 'help' {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return 'help';
  if (command !== 'verify' && command !== 'show') throw new UsageError(`unknown audit command "${command}"`);
  let json = false;
  let store: string | undefined;
  let operation: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined || v.length === 0 || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--json' && inline === undefined) json = true;
    else if (flag === '--store') store = value();
    else if (flag === '--operation' && command === 'verify') operation = value();
    else if (flag === '--help' || flag === '-h') return 'help';
    else if (flag.startsWith('-')) throw new UsageError(`unknown option ${flag} for audit ${command}`);
    else positional.push(arg);
  }
  if (command === 'verify') {
    if (positional.length > 0) throw new UsageError(`unexpected argument "${positional[0]}" (use --operation ID)`);
    return { command, operationId: operation, json, store };
  }
  if (positional.length !== 1) throw new UsageError('audit show needs exactly one operation ID');
  return { command, operationId: positional[0], json, store };
}

const processIo: AuditIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

/**
 * Runs `asyncjob audit ...` with `argv` being the arguments after `audit`. Returns the exit code; never throws
 * for expected failures (they are reported on stderr). Read-only on the journal (opening a store applies
 * pending migrations, as every process does on start).
 */
export async function runAuditCommand(argv: string[], io: AuditIo = processIo): Promise<number> {
  let args: ParsedArgs | 'help';
  try {
    args = parseArgs(argv);
  } catch (err) {
    io.stderr(`asyncjob audit: ${(err as Error).message}\n${AUDIT_USAGE}`);
    return AUDIT_EXIT.usage;
  }
  if (args === 'help') {
    io.stdout(AUDIT_USAGE);
    return AUDIT_EXIT.ok;
  }
  const location = args.store ?? io.env.ASYNCJOB_STORE ?? DEFAULT_STORE_LOCATION;
  const hmacKey = io.env.ASYNCJOB_AUDIT_HMAC_KEY || undefined;
  let store: OperationStore | undefined;
  try {
    store = await openStore(location, { hmacKey, mustExist: true });
    return args.command === 'verify' ? await verify(store, args, hmacKey !== undefined, io) : await show(store, args, io);
  } catch (err) {
    const message = isStoreError(err) ? err.message : `cannot read the store: ${err instanceof Error ? err.message : String(err)}`;
    io.stderr(`asyncjob audit: ${message}\n`);
    return AUDIT_EXIT.usage;
  } finally {
    await store?.close();
  }
}

async function verify(store: OperationStore, args: ParsedArgs, keyed: boolean, io: AuditIo): Promise<number> {
  const result = await store.verifyChains(args.operationId === undefined ? {} : { operationId: args.operationId });
  if (args.operationId !== undefined && result.operationsChecked === 0) {
    io.stderr(`asyncjob audit: nothing is recorded for operation ${args.operationId}\n`);
    return AUDIT_EXIT.usage;
  }
  io.stdout(args.json ? `${JSON.stringify(verifyJson(result, keyed), null, 2)}\n` : formatVerifyText(result, keyed));
  return result.breaks.length === 0 ? AUDIT_EXIT.ok : AUDIT_EXIT.brokenChain;
}

async function show(store: OperationStore, args: ParsedArgs, io: AuditIo): Promise<number> {
  const operationId = args.operationId!;
  const verification = await store.verifyChains({ operationId });
  if (verification.operationsChecked === 0) {
    io.stderr(`asyncjob audit: nothing is recorded for operation ${operationId}\n`);
    return AUDIT_EXIT.usage;
  }
  const chainBreak = verification.breaks[0] ?? null;
  let stored;
  try {
    stored = await store.entries(operationId);
  } catch (err) {
    // A row edited into something that no longer parses cannot be told as a story; the break is the story.
    if (chainBreak === null || !isStoreError(err, 'ASYNCJOB_ERR_INVALID_INPUT')) throw err;
    io.stdout(args.json ? `${JSON.stringify(storyJson(operationId, [], chainBreak), null, 2)}\n` : formatStoryText(operationId, [], chainBreak));
    return AUDIT_EXIT.brokenChain;
  }
  io.stdout(
    args.json
      ? `${JSON.stringify(storyJson(operationId, stored, chainBreak), null, 2)}\n`
      : formatStoryText(
          operationId,
          renderStory(stored.map((s) => s.entry)),
          chainBreak,
        ),
  );
  return chainBreak === null ? AUDIT_EXIT.ok : AUDIT_EXIT.brokenChain;
}
