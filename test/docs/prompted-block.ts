/**
 * Runs a documented `$ ` block as a user types it into one terminal (stderr interleaved with stdout, as a terminal
 * shows them) and checks that what it printed is what the document shows after each prompt.
 */
import { expect } from 'vitest';
import { promptedBlock, substitute, type Substitution } from './doc-commands';
import { outputMismatch } from './output-match';
import { runShell, type ShellRun } from './shell';

/**
 * Runs the prompted commands of the block that starts with `first` in `file`, with `substitutions` applied to the
 * commands and to the documented output alike; fails when the output differs from the document's.
 */
export async function runPromptedBlock(
  file: string,
  first: string,
  cwd: string,
  substitutions: Substitution[] = [],
  env: Record<string, string> = {},
): Promise<ShellRun> {
  const block = promptedBlock(file, first);
  const script = ['exec 2>&1', ...block.map((c) => substitute(c.text, substitutions, false))].join('\n');
  const documented = block.flatMap((c) => c.output.map((l) => substitute(l, substitutions, false)));
  const run = await runShell(script, { cwd, env, timeoutMs: 120_000 });
  expect(run.timedOut).toBe(false);
  expect(outputMismatch(documented, run.stdout)).toBeUndefined();
  return run;
}

/** The same, without failing: the first difference from the document, or undefined (for a condition to wait on). */
export async function promptedBlockMismatch(
  file: string,
  first: string,
  cwd: string,
  substitutions: Substitution[] = [],
  env: Record<string, string> = {},
): Promise<string | undefined> {
  const block = promptedBlock(file, first);
  const script = ['exec 2>&1', ...block.map((c) => substitute(c.text, substitutions, false))].join('\n');
  const documented = block.flatMap((c) => c.output.map((l) => substitute(l, substitutions, false)));
  const run = await runShell(script, { cwd, env, timeoutMs: 120_000 });
  return run.timedOut ? 'timed out' : outputMismatch(documented, run.stdout);
}
