/**
 * `asyncjob result ID [--out FILE]`: the operation's collected result, read from the artifact store and verified
 * against the sha256 and size the workflow recorded (`AsyncJobClient.readResult`), from any machine that reaches
 * the store. To stdout the bytes go out as they are read, and a mismatch found at their end exits non-zero after
 * them; with `--out` the file appears only once every byte matched (written under a temporary name beside it,
 * flushed, then renamed), and a mismatch or a read error leaves no file.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UsageError } from './args';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT } from './exit-codes';

/** Writes the verified result to stdout or `--out`; errors (`ASYNCJOB_ERR_RESULT_UNAVAILABLE`, ...) are thrown. */
export async function resultCommand(ctx: CommandContext, cmd: Cmd<'result'>): Promise<number> {
  if (cmd.out === undefined && cmd.json)
    throw new UsageError('--json needs --out FILE (without it the result itself goes to stdout)', 'result');
  const body = await (await ctx.client()).readResult(cmd.operationId);
  if (cmd.out === undefined) {
    await pipeline(body, ctx.deps.stdoutBytes ?? process.stdout, { end: false });
    return EXIT.ok;
  }
  const file = path.resolve(cmd.out);
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.partial-${randomBytes(6).toString('hex')}`);
  try {
    await pipeline(body, createWriteStream(temp, { flags: 'wx', mode: 0o644, flush: true }));
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  const written = { file: cmd.out, sha256: body.recorded.sha256, sizeBytes: body.bytesRead };
  if (cmd.json) emit(ctx, { schema: 'asyncjob.result/v1', operationId: cmd.operationId, ...written });
  else say(ctx, `wrote ${written.sizeBytes} bytes to ${written.file} (sha256 ${written.sha256}, verified)`);
  return EXIT.ok;
}
