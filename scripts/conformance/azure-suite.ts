/**
 * The `azure-lro` suite of `npm run conformance`: the LRO scenarios of Azure's public conformance server
 * (`@microsoft.azure/autorest.testserver`, pinned in testserver.ts), one adapter document per scenario from the
 * templates in `test/conformance/`, judged on asyncjob's outcome and the server's coverage counters.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeScenarioAdapters } from './adapters';
import { startAsyncjob, type Harness } from './harness';
import { formatTable, runScenarios } from './run';
import { EXCLUDED, SCENARIOS, unmappedCounters } from './scenarios';
import { startTestServer, TEST_SERVER_PACKAGE, TEST_SERVER_VERSION, type TestServer } from './testserver';

/** What a suite reports to the driver. */
export interface SuiteOutcome {
  passed: number;
  total: number;
  /** Every counted scenario passed and nothing the suite must account for was left unaccounted. */
  ok: boolean;
  /** Keep the data directory (a scenario failed). */
  keep: boolean;
}

/** How the driver runs a suite. */
export interface SuiteOptions {
  only?: string[];
  temporalAddress: string;
  /** The Temporal namespace (default `default`). */
  namespace?: string;
  dataDir: string;
  runId: string;
  stories: boolean;
  /** Print nothing (a test reads the outcome instead). */
  quiet?: boolean;
}

/** The scenario names of the suite (for `--only`). */
export const AZURE_SCENARIO_NAMES: readonly string[] = SCENARIOS.map((s) => s.name);

/** Runs the Azure LRO scenarios (all, or those named in `only`) and prints the table and the exclusions. */
export async function runAzureSuite(options: SuiteOptions): Promise<SuiteOutcome> {
  const scenarios = options.only === undefined ? SCENARIOS : SCENARIOS.filter((s) => options.only!.includes(s.name));
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const server: TestServer = await startTestServer({
      logFile: path.join(options.dataDir, 'testserver.log'),
      coverageDir: options.dataDir,
    });
    cleanups.unshift(() => server.stop());
    console.log(`conformance azure-lro: ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} at ${server.url}`);
    // Every LRO scenario the server counts is run or excluded with a reason: none is silently left out of N.
    const unmapped = unmappedCounters(Object.keys(await server.coverage()));
    if (unmapped.length > 0)
      console.log(`conformance azure-lro: LRO counters neither run nor excluded: ${unmapped.join(', ')}`);
    const providers = await writeScenarioAdapters(scenarios, path.join(options.dataDir, 'adapters'));
    const harness: Harness = await startAsyncjob({
      temporalAddress: options.temporalAddress,
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      providers,
      env: { AZURE_LRO_TESTSERVER_URL: server.url },
      dataDir: options.dataDir,
    });
    cleanups.unshift(() => harness.stop());
    console.log(`conformance azure-lro: worker serving ${providers.length} adapters; starting ${scenarios.length}`);
    const results = await runScenarios(harness, server, scenarios, { runId: options.runId });

    const failing = results.filter((r) => !r.pass);
    const story = (r: (typeof results)[number]): string =>
      `== ${r.scenario.name} (${r.scenario.method} ${r.scenario.route}): ${r.pass ? 'pass' : `FAIL: ${r.why}`}\n${r.story}`;
    await writeFile(
      path.join(options.dataDir, 'stories.txt'),
      `${[...failing, ...results.filter((r) => r.pass)].map(story).join('\n\n')}\n`,
    );
    if (failing.length > 0 && options.stories) console.log(`${failing.map(story).join('\n\n')}\n`);
    console.log(formatTable(results));
    console.log('');
    console.log(`excluded (${EXCLUDED.length}, not counted):`);
    for (const e of EXCLUDED) console.log(`  ${e.counter}: ${e.reason}`);
    const passed = results.length - failing.length;
    return {
      passed,
      total: results.length,
      ok: failing.length === 0 && unmapped.length === 0,
      keep: failing.length > 0,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
