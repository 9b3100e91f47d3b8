/**
 * What every `asyncjob` command runs with: the seam to the world (`deps.ts`), the client (connected on first
 * use), and the two ways a command writes (one JSON document per line, or text).
 */
import { type CliCommand, type JsonSource, UsageError } from './args';
import type { CliClient, CliDeps } from './deps';

/** What a command runs with: the seam, and the client (connected on first use). */
export interface CommandContext {
  deps: CliDeps;
  client(): Promise<CliClient>;
}

/** The parsed command of one kind. */
export type Cmd<K extends CliCommand['command']> = Extract<CliCommand, { command: K }>;

/** Writes one JSON document as one line on stdout. */
export function emit(ctx: CommandContext, json: unknown): void {
  ctx.deps.stdout(`${JSON.stringify(json)}\n`);
}

/** Writes text lines on stdout. */
export function say(ctx: CommandContext, ...lines: string[]): void {
  ctx.deps.stdout(`${lines.join('\n')}\n`);
}

/** Reads a JSON option given inline or as `@file`; a usage error names the option. */
export function readJson(ctx: CommandContext, source: JsonSource, option: string): unknown {
  let text: string;
  if (source.kind === 'file') {
    try {
      text = ctx.deps.readFile(source.path);
    } catch (err) {
      throw new UsageError(
        `${option}: cannot read ${source.path}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  } else {
    text = source.text;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${option}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}
