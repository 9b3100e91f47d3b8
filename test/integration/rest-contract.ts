/** The provider contract the worker-process tests serve: the built-in `rest` preset at a simulator's URL. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';

/** Writes `<dir>/<provider>.json`: the `rest` preset at `baseUrl`, its credential from REPORTS_TOKEN; its path. */
export async function writeRestContract(dir: string, provider: string, baseUrl: string): Promise<string> {
  const file = path.join(dir, `${provider}.json`);
  const contract = {
    ...(BUILT_IN_PRESETS.rest as Record<string, unknown>),
    name: provider,
    baseUrl,
    credential: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
  };
  await writeFile(file, JSON.stringify(contract));
  return file;
}
