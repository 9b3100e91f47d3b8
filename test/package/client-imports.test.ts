/**
 * `asyncjob/client` is for services: loading it loads nothing of the worker side. A fresh Node process loads the
 * entry package.json `exports` names (from source, through tsx) and reports every module it loaded, with the module
 * that first required each, so a failure shows the import chain that pulled the worker side in.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceOfSpecifier } from './entries';

const run = promisify(execFile);

/** Packages and our own modules that belong to the worker side, never to a client. */
const WORKER_SIDE: readonly { what: string; pattern: RegExp }[] = [
  { what: '@temporalio/worker', pattern: /\/node_modules\/@temporalio\/(worker|core-bridge)\// },
  { what: 'undici', pattern: /\/node_modules\/undici\// },
  { what: 'pg', pattern: /\/node_modules\/pg(-[a-z]+)?\// },
  { what: 'better-sqlite3', pattern: /\/node_modules\/better-sqlite3\// },
  { what: 'the worker', pattern: /\/src\/(worker|worker-api|logging)\.ts$/ },
  { what: 'the activities', pattern: /\/src\/activities\// },
  { what: 'the stores', pattern: /\/src\/adapters\/store\// },
  { what: 'the HTTP client', pattern: /\/src\/adapters\/http\// },
  { what: 'the webhook receiver', pattern: /\/src\/webhooks\// },
  { what: 'the simulator', pattern: /\/src\/simulator\// },
];

/** Runs in the child: loads the entry, then prints every loaded module and the module that first required it. */
const PROBE = `
require(process.env.ASYNCJOB_PROBE_ENTRY);
const requiredBy = {};
for (const loaded of Object.values(require.cache))
  for (const child of loaded.children) requiredBy[child.id] ??= loaded.id;
process.stdout.write(JSON.stringify({ modules: Object.keys(require.cache), requiredBy }));
`;

interface LoadedModules {
  modules: string[];
  requiredBy: Record<string, string>;
}

/** Every module a fresh process loads for `specifier`. */
async function modulesLoadedBy(specifier: string): Promise<LoadedModules> {
  const entry = sourceOfSpecifier(specifier);
  const { stdout } = await run(process.execPath, ['--require', 'tsx/cjs', '--eval', PROBE], {
    cwd: ROOT,
    env: { ...process.env, ASYNCJOB_PROBE_ENTRY: entry },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as LoadedModules;
}

/** The chain of requires from the entry to `file`, paths relative to the repository. */
function chainTo(file: string, loaded: LoadedModules): string {
  const chain = [file];
  while (loaded.requiredBy[chain[0]!] !== undefined && chain.length < 50) chain.unshift(loaded.requiredBy[chain[0]!]!);
  return chain.map((step) => path.relative(ROOT, step)).join(' -> ');
}

/** The worker-side modules among those loaded, each with the chain that loaded the first of its kind. */
function workerSideIn(loaded: LoadedModules): string[] {
  return WORKER_SIDE.flatMap(({ what, pattern }) => {
    const first = loaded.modules.find((file) => pattern.test(file));
    return first === undefined ? [] : [`${what}: ${chainTo(first, loaded)}`];
  });
}

describe('asyncjob/client loads no worker side', () => {
  it('loads the Temporal client and asyncjob’s client, and none of the worker, stores, undici, pg or better-sqlite3', async () => {
    const loaded = await modulesLoadedBy('asyncjob/client');
    expect(loaded.modules.some((file) => file.endsWith(path.join('src', 'client.ts')))).toBe(true);
    expect(loaded.modules.some((file) => /\/node_modules\/@temporalio\/client\//.test(file))).toBe(true);
    expect(workerSideIn(loaded)).toEqual([]);
  });

  it('sees the worker side where it is loaded: asyncjob/worker loads each of the packages the client must not', async () => {
    const found = workerSideIn(await modulesLoadedBy('asyncjob/worker')).map((line) => line.split(':')[0]);
    expect(found).toEqual(
      expect.arrayContaining(['@temporalio/worker', 'undici', 'pg', 'better-sqlite3', 'the stores']),
    );
  });
});
