/**
 * Every succeeded operation's result read back on the client's host, as a service elsewhere reads it: all of them
 * through `AsyncJobClient.readResult` (scripts/cluster/read-back.ts), and a few through `asyncjob result ID --out
 * FILE` as an operator types it. Each must hash to what the provider served.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..', '..');
const runFile = promisify(execFile);

/** A result to read back and the sha256 (hex) the provider served for it. */
export interface ExpectedResult {
  operationId: string;
  sha256: string;
}

/** What reading back found. */
export interface ReadBack {
  /** Results read back through the library and matching what the provider served. */
  viaLibrary: number;
  /** Results written by `asyncjob result --out` and matching. */
  viaCli: number;
  problems: string[];
}

/** Runs read-back.ts with `prefix` (the client host's `ip netns exec …`, or none) and parses its lines. */
function readThroughLibrary(prefix: string[], env: Record<string, string>, ids: string[]) {
  const [command, ...args] = [...prefix, process.execPath, '--import', 'tsx', path.join(__dirname, 'read-back.ts')];
  const child = spawn(command!, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
  child.stdin.end(JSON.stringify(ids));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<Record<string, string | number>[]>((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0
        ? resolve(
            stdout
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as Record<string, string | number>),
          )
        : reject(new Error(`read-back exited ${code}: ${stderr.slice(-2000)}`)),
    ),
  );
}

/** Reads every expected result back on the client's host and compares it with what the provider served. */
export async function readResultsBack(
  prefix: string[],
  env: Record<string, string>,
  expected: ExpectedResult[],
  scratchDir: string,
  viaCliCount = 3,
): Promise<ReadBack> {
  const served = new Map(expected.map((r) => [r.operationId, r.sha256]));
  const outcome: ReadBack = { viaLibrary: 0, viaCli: 0, problems: [] };
  for (const line of await readThroughLibrary(prefix, env, [...served.keys()])) {
    const id = String(line.operationId);
    if (line.error !== undefined) outcome.problems.push(`${id}: readResult failed: ${line.error}`);
    else if (line.sha256 !== served.get(id))
      outcome.problems.push(`${id}: read back ${line.sha256}, the provider served ${served.get(id)}`);
    else outcome.viaLibrary++;
  }
  for (const { operationId, sha256 } of expected.slice(0, viaCliCount)) {
    const file = path.join(scratchDir, `${createHash('sha256').update(operationId).digest('hex')}.result`);
    const [command, ...args] = [...prefix, process.execPath, path.join(ROOT, 'bin', 'asyncjob'), 'result', operationId];
    try {
      await runFile(command!, [...args, '--out', file], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
      const bytes = await readFile(file);
      if (createHash('sha256').update(bytes).digest('hex') === sha256) outcome.viaCli++;
      else outcome.problems.push(`${operationId}: asyncjob result --out wrote other bytes than the provider served`);
    } catch (error) {
      outcome.problems.push(
        `${operationId}: asyncjob result failed: ${(error as { stderr?: string }).stderr ?? String(error)}`,
      );
    } finally {
      await rm(file, { force: true });
    }
  }
  return outcome;
}
