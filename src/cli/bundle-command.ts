/**
 * `asyncjob bundle --out FILE`: the workflows bundled once, at build time, for workers started with
 * ASYNCJOB_WORKFLOW_BUNDLE=FILE, which then skip the seconds of CPU a worker spends bundling at start (and again
 * after every restart). The bundle is stamped with this version and its workflow sources' hash (src/worker.ts).
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@temporalio/common';
import { bundleWorkflows } from '../workflow-bundle';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT, type ExitCode } from './exit-codes';

/** The bundler's own report (webpack's statistics) is noise here; its warnings and errors go to stderr. */
function bundlerLogger(ctx: CommandContext): Logger {
  const quiet = (): void => undefined;
  const show = (message: string): void => ctx.deps.stderr(`${message}\n`);
  return { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: show, error: show };
}

/** `bundle`: see the module comment. Written next to FILE first, then renamed, so a worker never reads half of it. */
export async function bundleCommand(ctx: CommandContext, cmd: Cmd<'bundle'>): Promise<ExitCode> {
  const file = path.resolve(cmd.out);
  const { code, stamp } = await bundleWorkflows(bundlerLogger(ctx));
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    await writeFile(partial, code);
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
  const bytes = Buffer.byteLength(code);
  if (cmd.json) {
    emit(ctx, { schema: 'asyncjob.bundle/v1', file, bytes, asyncjob: stamp.asyncjob, sources: stamp.sources });
  } else {
    say(
      ctx,
      `${file}: ${(bytes / 1024 / 1024).toFixed(1)} MiB, the workflows of asyncjob ${stamp.asyncjob} (sources ${stamp.sources})`,
      `start workers with ASYNCJOB_WORKFLOW_BUNDLE=${file}`,
    );
  }
  return EXIT.ok;
}
