/**
 * A deterministic subset of `npm run conformance`'s `aws-json` suite: the AWS documents of `examples/providers/`
 * run against moto's server (`moto[server]`, pinned) with signature checking on, through a real worker and client
 * (SigV4 on every request, verified by moto): a success, AWS's throttling answer waited out, a lost Transcribe start
 * found by a lookup of its job name, a Step Functions failure, and a lost Step Functions start resent with its
 * token. Skipped, with a message saying so, only when moto is not installed in `.conformance/moto`
 * (`npm run conformance -- --install-only` and `.ci/run` install it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startDevServer, type DevServer } from '../../src/dev/temporal-server';
import { AWS_SUBSET } from '../../scripts/conformance/aws/scenarios';
import { runAwsSuite } from '../../scripts/conformance/aws/suite';
import type { AwsScenarioResult } from '../../scripts/conformance/aws/judge';
import { MOTO_PACKAGE, MOTO_VERSION, motoInstalledSync } from '../../scripts/conformance/moto';

const installed = motoInstalledSync();
if (!installed) {
  console.warn(
    `test/conformance/aws-json.test.ts: SKIPPED: ${MOTO_PACKAGE}==${MOTO_VERSION} is not installed in .conformance/moto ` +
      `(install it with: npm run conformance -- --install-only)`,
  );
}

describe.skipIf(!installed)('moto with SigV4 checked, the AWS example documents (a subset of aws-json)', () => {
  let dataDir: string;
  let temporal: DevServer | undefined;
  let results: readonly AwsScenarioResult[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-conformance-aws-test-'));
    // The integration project's global setup provides a dev server; on its own the file starts one.
    let address = inject('temporalAddress') as string | undefined;
    if (address === undefined || address === '') {
      temporal = await startDevServer();
      address = temporal.address;
    }
    const outcome = await runAwsSuite({
      temporalAddress: address,
      namespace: (inject('temporalNamespace') as string | undefined) ?? 'default',
      dataDir,
      runId: randomBytes(4).toString('hex'),
      stories: false,
      only: [...AWS_SUBSET],
      quiet: true,
    });
    results = outcome.results;
  }, 300_000);

  afterAll(async () => {
    await temporal?.stop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it.each(AWS_SUBSET.map((name) => [name]))(
    '%s ends as a correct AWS client ends it, every request signed and verified by moto',
    (name) => {
      const result = results.find((r) => r.scenario.name === name);
      expect(result, `${name} was run`).toBeDefined();
      expect(result!.why, `${name} (${result!.scenario.proves}): the audit story\n${result!.story}`).toBe('');
      expect(result!.pass).toBe(true);
    },
  );
});
