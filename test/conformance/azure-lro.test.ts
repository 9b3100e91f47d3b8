/**
 * A deterministic subset of `npm run conformance`: one PUT, one PATCH, one POST, one DELETE and one sad path of
 * Azure's LRO conformance server (`@microsoft.azure/autorest.testserver`, pinned), driven through asyncjob with
 * the adapter templates of this folder, each judged on asyncjob's outcome, the stored result and the server's
 * coverage counters. Skipped, with a message saying so, only when the test server is not installed in
 * `.conformance/` (`npm run conformance` and `.ci/run` install it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/temporal-server';
import { writeScenarioAdapters } from '../../scripts/conformance/adapters';
import { startAsyncjob, type Harness } from '../../scripts/conformance/harness';
import { runScenarios, type ScenarioResult } from '../../scripts/conformance/run';
import { SCENARIOS, SUBSET } from '../../scripts/conformance/scenarios';
import {
  installedVersionSync,
  startTestServer,
  TEST_SERVER_PACKAGE,
  TEST_SERVER_VERSION,
  type TestServer,
} from '../../scripts/conformance/testserver';

const installed = installedVersionSync() === TEST_SERVER_VERSION;
if (!installed) {
  console.warn(
    `test/conformance/azure-lro.test.ts: SKIPPED: ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} is not installed in .conformance/ ` +
      `(install it with: npm run conformance -- --install-only)`,
  );
}

const scenarios = SCENARIOS.filter((s) => SUBSET.includes(s.name));

describe.skipIf(!installed)(
  'Azure LRO conformance server, a subset (one PUT, PATCH, POST, DELETE and a sad path)',
  () => {
    let dataDir: string;
    let server: TestServer | undefined;
    let temporal: DevServer | undefined;
    let harness: Harness | undefined;
    let results: ScenarioResult[] = [];

    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-conformance-test-'));
      server = await startTestServer({ logFile: path.join(dataDir, 'testserver.log'), coverageDir: dataDir });
      // The integration project's global setup provides a dev server; on its own the file starts one.
      let address = inject('temporalAddress') as string | undefined;
      const namespace = (inject('temporalNamespace') as string | undefined) ?? 'default';
      if (address === undefined || address === '') {
        temporal = await startDevServer();
        address = temporal.address;
      }
      const providers = await writeScenarioAdapters(scenarios, path.join(dataDir, 'adapters'));
      harness = await startAsyncjob({
        temporalAddress: address,
        namespace,
        providers,
        env: { AZURE_LRO_TESTSERVER_URL: server.url },
        dataDir,
      });
      results = await runScenarios(harness, server, scenarios, {
        runId: randomBytes(4).toString('hex'),
        waitTimeoutMs: 150_000,
      });
    }, 300_000);

    afterAll(async () => {
      await harness?.stop();
      await server?.stop();
      await temporal?.stop();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    }, 60_000);

    it.each(SUBSET.map((name) => [name]))(
      '%s ends as a correct LRO client ends it, and the server counted it',
      (name) => {
        const result = results.find((r) => r.scenario.name === name);
        expect(result, `${name} was run`).toBeDefined();
        expect(
          result!.why,
          `${name} (${result!.scenario.method} ${result!.scenario.route}): the audit story\n${result!.story}`,
        ).toBe('');
        expect(result!.pass).toBe(true);
      },
    );
  },
);
