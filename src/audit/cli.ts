/**
 * `asyncjob audit`: verify the operation record, take signed checkpoints of it, and show an operation's story.
 *
 *   asyncjob audit verify [--operation ID] [--against FILE]... [--with-temporal] [--allow-missing-artifacts] [--json] [--store LOCATION]
 *   asyncjob audit checkpoint [--out FILE] [--store LOCATION]
 *   asyncjob audit show ID [--json] [--store LOCATION]
 *
 * The store is `--store`, else `ASYNCJOB_STORE`, else `sqlite:.asyncjob/asyncjob.db`. Keys come from the
 * environment exactly as the worker reads them (`src/audit/keys.ts`), never from the command line.
 * Exit codes: 0 ok, 1 a change was found (or a checkpoint refused over one), 2 usage error, bad input, or
 * signatures that cannot be checked because their key is not configured.
 */
import { verifyOperationRows, type ChainKey, type OperationChainResult } from '../adapters/store/chain';
import { type OperationStore } from '../adapters/store/operation-store';
import { DEFAULT_STORE_LOCATION, openStore } from '../adapters/store/open-store';
import { runCheckpoint } from './checkpoint-command';
import { AUDIT_EXIT, type AuditIo, type ParsedArgs } from './io';
import { UsageError } from '../cli/args-common';
import { AsyncJobError, hasCode } from '../core/errors';
import { keyNotConfigured, readChainKey } from './keys';
import { formatStoryText, renderStory, storyJson, type Unverified } from './story';
import { runVerify } from './verify-command';

export { type AuditIo } from './io';

/** The usage text. */
export const AUDIT_USAGE = `usage:
  asyncjob audit verify [--operation ID] [--against FILE]... [--with-temporal] [--json] [--store LOCATION]
                        [--allow-missing-artifacts]
  asyncjob audit checkpoint [--out FILE] [--store LOCATION]
  asyncjob audit show ID [--json] [--store LOCATION]

LOCATION is sqlite:PATH or postgres://... (default: $ASYNCJOB_STORE, else ${DEFAULT_STORE_LOCATION}).
--against FILE   hold the store to the checkpoints in FILE (what audit checkpoint wrote or appended)
--with-temporal  also hold it to Temporal's history (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ...)
--allow-missing-artifacts  artifact files gone from this host (deliberate retention) are listed, not findings
                 (the artifact root is ASYNCJOB_ARTIFACTS_DIR, default .asyncjob/artifacts; objects of the
                 store ASYNCJOB_ARTIFACTS names are fetched and hashed, with the standard AWS variables)
--out FILE       append the checkpoint to FILE (one JSON line) instead of printing it
Keys (a file or a value each, as the worker reads them): ASYNCJOB_AUDIT_HMAC_KEY_FILE | ASYNCJOB_AUDIT_HMAC_KEY,
ASYNCJOB_AUDIT_SIGNING_KEY_FILE | ASYNCJOB_AUDIT_SIGNING_KEY (Ed25519 private, PEM),
ASYNCJOB_AUDIT_VERIFY_KEY_FILE | ASYNCJOB_AUDIT_VERIFY_KEY (Ed25519 public, PEM).
exit codes: 0 ok, 1 a change was found, 2 usage error, bad input, or a signature whose key is not configured
`;

const FLAGS: Readonly<Record<ParsedArgs['command'], readonly string[]>> = {
  verify: ['--json', '--store', '--operation', '--against', '--with-temporal', '--allow-missing-artifacts'],
  show: ['--json', '--store'],
  checkpoint: ['--store', '--out'],
};

function parseArgs(argv: readonly string[]): ParsedArgs | 'help' {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return 'help';
  if (command !== 'verify' && command !== 'show' && command !== 'checkpoint')
    throw new UsageError(`unknown audit command "${command}"`);
  const parsed = {
    command: command as ParsedArgs['command'],
    operationId: undefined as string | undefined,
    json: false,
    store: undefined as string | undefined,
    against: [] as string[],
    withTemporal: false,
    allowMissingArtifacts: false,
    out: undefined as string | undefined,
  };
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined || v.length === 0 || (inline === undefined && v.startsWith('--')))
        throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--help' || flag === '-h') return 'help';
    if (!flag.startsWith('-')) positional.push(arg);
    else if (!FLAGS[command].includes(flag)) throw new UsageError(`unknown option ${flag} for audit ${command}`);
    else if (flag === '--json' || flag === '--with-temporal' || flag === '--allow-missing-artifacts') {
      if (inline !== undefined) throw new UsageError(`${flag} takes no value`);
      if (flag === '--json') parsed.json = true;
      else if (flag === '--with-temporal') parsed.withTemporal = true;
      else parsed.allowMissingArtifacts = true;
    } else if (flag === '--store') parsed.store = value();
    else if (flag === '--operation') parsed.operationId = value();
    else if (flag === '--against') parsed.against.push(value());
    else parsed.out = value();
  }
  if (command === 'show') {
    if (positional.length !== 1) throw new UsageError('audit show needs exactly one operation ID');
    return { ...parsed, operationId: positional[0] };
  }
  if (positional.length > 0)
    throw new UsageError(
      `unexpected argument "${positional[0]}"${command === 'verify' ? ' (use --operation ID)' : ''}`,
    );
  return parsed;
}

const processIo: AuditIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

/**
 * Runs `asyncjob audit ...` with `argv` being the arguments after `audit`. Returns the exit code; never throws
 * for expected failures (they are reported on stderr). Read-only on the journal; `checkpoint` records the
 * checkpoint it signs in the store's register (opening a store applies pending migrations, as every process does).
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
  let store: OperationStore | undefined;
  try {
    const key = await readChainKey(io.env);
    store = await openStore(location, { ...(key ? { hmacKey: key.secret } : {}), mustExist: true });
    if (args.command === 'verify') return await runVerify(store, args, key, io);
    if (args.command === 'checkpoint') return await runCheckpoint(store, args, key, io);
    return await show(store, args.operationId!, args.json, io, key);
  } catch (err) {
    // Whatever stops the check leaves the record unverified: exit 2, audit's own status for "cannot verify".
    const message =
      err instanceof AsyncJobError
        ? `${err.code}: ${err.message}`
        : `cannot read the store: ${err instanceof Error ? err.message : String(err)}`;
    io.stderr(`asyncjob audit: ${message}\n`);
    return AUDIT_EXIT.usage;
  } finally {
    await store?.close();
  }
}

/** Which entries `audit show` must mark as unverified: from the first break, or the first unverifiable signature. */
function unverifiedOf(chain: OperationChainResult): Unverified | null {
  if (chain.break !== null) return { from: chain.break.sequence, why: chain.break.problem };
  if (chain.unverifiable !== null)
    return { from: chain.unverifiable.sequence, why: keyNotConfigured(chain.unverifiable.keyId, 'chain') };
  return null;
}

async function show(
  store: OperationStore,
  operationId: string,
  json: boolean,
  io: AuditIo,
  key: ChainKey | undefined,
): Promise<number> {
  const data = await store.auditSource().readOperation(operationId);
  if (data.row === null && data.journal.length === 0) {
    io.stderr(`asyncjob audit: nothing is recorded for operation ${operationId}\n`);
    return AUDIT_EXIT.usage;
  }
  const head = data.row === null ? null : { lastSequence: data.row.lastSequence, lastHash: data.row.lastHash };
  const chain = verifyOperationRows(operationId, data.journal, head, key);
  const chainBreak = chain.break;
  const unverified = unverifiedOf(chain);
  let stored;
  try {
    stored = await store.entries(operationId);
  } catch (err) {
    // A row edited into something that no longer parses cannot be told as a story; the break is the story.
    if (chainBreak === null || !hasCode(err, 'ASYNCJOB_ERR_INVALID_INPUT')) throw err;
    io.stdout(
      json
        ? `${JSON.stringify(storyJson(operationId, [], chainBreak), null, 2)}\n`
        : formatStoryText(operationId, [], chainBreak),
    );
    return AUDIT_EXIT.brokenChain;
  }
  io.stdout(
    json
      ? `${JSON.stringify(storyJson(operationId, stored, chainBreak, unverified), null, 2)}\n`
      : formatStoryText(operationId, renderStory(stored.map((s) => s.entry)), chainBreak, unverified),
  );
  if (chainBreak !== null) return AUDIT_EXIT.brokenChain;
  if (chain.unverifiable !== null) {
    io.stderr(
      `asyncjob audit: operation ${operationId} from sequence ${chain.unverifiable.sequence}: ${keyNotConfigured(chain.unverifiable.keyId, 'chain')}\n`,
    );
    return AUDIT_EXIT.usage;
  }
  return AUDIT_EXIT.ok;
}
