/** Provider contract files for simulators: a dialect's preset under another name and base URL. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PRESETS = path.join(__dirname, '..', '..', 'src', 'adapters', 'providers', 'presets');

/**
 * Writes `<dir>/<name>.json`: the `dialect` preset named `name` (a worker serves a contract under its file's name)
 * pointing at `baseUrl`, with `patch` laid over it; returns its path.
 */
export function writeContract(
  dir: string,
  dialect: string,
  name: string,
  baseUrl: string,
  patch: Record<string, unknown> = {},
): string {
  const contract = JSON.parse(readFileSync(path.join(PRESETS, `${dialect}.json`), 'utf8')) as Record<string, unknown>;
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ ...contract, ...patch, name, baseUrl }, null, 2));
  return file;
}
