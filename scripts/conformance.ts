/**
 * `npm run conformance`: drives the LRO scenarios of Azure's public conformance server
 * (`@microsoft.azure/autorest.testserver`, pinned in scripts/conformance/testserver.ts) through asyncjob as a user
 * would: one adapter document per scenario from the templates in `test/conformance/`, an asyncjob worker serving
 * them on a Temporal dev server of its own (or `--temporal HOST:PORT`), one operation per scenario started with
 * `AsyncJobClient`, and each outcome judged against the scenario's expected one and the server's coverage counters.
 *
 * Prints a table and, last, `conformance: P of N scenarios passed`. Exits 0 when every scenario passes (and so
 * P/N >= 90%), 1 otherwise, 2 on a usage or set-up error. Options: `--only A,B` runs some scenarios;
 * `--stories` prints the audit story of each failing scenario; `--keep` keeps the data directory (store,
 * artifacts, adapter documents, worker and test server logs), which is also kept when a scenario fails;
 * `--install-only` installs the test server (what `.ci/run` does before `npm test`) and exits.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startDevServer, type DevServer } from '../src/dev/temporal-server';
import { writeScenarioAdapters } from './conformance/adapters';
import { startAsyncjob, type Harness } from './conformance/harness';
import { formatTable, runScenarios } from './conformance/run';
import { EXCLUDED, SCENARIOS, unmappedCounters } from './conformance/scenarios';
import {
  ensureTestServerInstalled,
  startTestServer,
  TEST_SERVER_PACKAGE,
  TEST_SERVER_VERSION,
  type TestServer,
} from './conformance/testserver';

interface Options {
  installOnly: boolean;
  only?: string[];
  temporalAddress?: string;
  stories: boolean;
  keep: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { installOnly: false, stories: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? argv[i]!.split('=', 2) : [argv[i]!, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--only')
      options.only = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (flag === '--temporal') options.temporalAddress = value();
    else if (flag === '--stories') options.stories = true;
    else if (flag === '--keep') options.keep = true;
    else if (flag === '--install-only') options.installOnly = true;
    else
      throw new Error(
        `unknown option ${flag} (use --only A,B, --temporal HOST:PORT, --stories, --keep, --install-only)`,
      );
  }
  return options;
}

async function main(options: Options): Promise<number> {
  const began = Date.now();
  const scenarios = options.only === undefined ? SCENARIOS : SCENARIOS.filter((s) => options.only!.includes(s.name));
  const unknown = (options.only ?? []).filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
  const installed = await ensureTestServerInstalled((line) => console.log(line));
  if (options.installOnly) {
    console.log(
      `conformance: ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} ${installed === 'present' ? 'already installed' : 'installed'} in .conformance/`,
    );
    return 0;
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-conformance-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  let keep = options.keep;
  try {
    const server: TestServer = await startTestServer({
      logFile: path.join(dataDir, 'testserver.log'),
      coverageDir: dataDir,
    });
    cleanups.unshift(() => server.stop());
    let temporal: DevServer | undefined;
    if (options.temporalAddress === undefined) {
      temporal = await startDevServer({ logFile: path.join(dataDir, 'temporal.log') });
      cleanups.unshift(() => temporal!.stop());
    }
    const address = options.temporalAddress ?? temporal!.address;
    console.log(
      `conformance: ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} at ${server.url}, Temporal at ${address}, data in ${dataDir}`,
    );
    // Every LRO scenario the server counts is run or excluded with a reason: none is silently left out of N.
    const unmapped = unmappedCounters(Object.keys(await server.coverage()));
    if (unmapped.length > 0) console.log(`conformance: LRO counters neither run nor excluded: ${unmapped.join(', ')}`);
    const providers = await writeScenarioAdapters(scenarios, path.join(dataDir, 'adapters'));
    const harness: Harness = await startAsyncjob({
      temporalAddress: address,
      providers,
      env: { AZURE_LRO_TESTSERVER_URL: server.url },
      dataDir,
    });
    cleanups.unshift(() => harness.stop());
    console.log(`conformance: worker serving ${providers.length} adapters; starting ${scenarios.length} operations`);
    const results = await runScenarios(harness, server, scenarios, { runId: randomBytes(4).toString('hex') });

    const failing = results.filter((r) => !r.pass);
    const story = (r: (typeof results)[number]): string =>
      `== ${r.scenario.name} (${r.scenario.method} ${r.scenario.route}): ${r.pass ? 'pass' : `FAIL: ${r.why}`}\n${r.story}`;
    await writeFile(
      path.join(dataDir, 'stories.txt'),
      `${[...failing, ...results.filter((r) => r.pass)].map(story).join('\n\n')}\n`,
    );
    if (failing.length > 0) {
      keep = true;
      if (options.stories) console.log(`${failing.map(story).join('\n\n')}\n`);
    }
    console.log(formatTable(results));
    console.log('');
    console.log(`excluded (${EXCLUDED.length}, not counted):`);
    for (const e of EXCLUDED) console.log(`  ${e.counter}: ${e.reason}`);
    const passed = results.length - failing.length;
    const seconds = ((Date.now() - began) / 1000).toFixed(1);
    if (keep)
      console.log(
        `data kept in ${dataDir}${failing.length > 0 ? ' (stories.txt: the audit story of every operation, failing ones first; worker.log; testserver.log)' : ''}`,
      );
    console.log(`run time ${seconds} s`);
    console.log(`conformance: ${passed} of ${results.length} scenarios passed`);
    return failing.length === 0 && unmapped.length === 0 && passed / Math.max(1, results.length) >= 0.9 ? 0 : 1;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
    if (!keep) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

if (require.main === module) {
  let options: Options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`conformance: ${(error as Error).message}`);
    process.exit(2);
  }
  main(options).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`conformance failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(2);
    },
  );
}
