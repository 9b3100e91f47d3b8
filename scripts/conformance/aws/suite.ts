/**
 * The `aws-json` suite of `npm run conformance`: moto's server with signature checking on, a fault proxy per
 * scenario in front of it, the AWS documents of `examples/providers/` pointed at the proxies, and asyncjob's
 * worker signing every request with the IAM user's key through the standard AWS credentials file.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SuiteOptions, SuiteOutcome } from '../azure-suite';
import { startAsyncjob } from '../harness';
import { MOTO_PACKAGE, MOTO_VERSION, startMoto, type MotoServer } from '../moto';
import { PROFILES, writeAwsAdapters } from './adapters';
import { startFaultProxy, type FaultProxy } from './fault-proxy';
import { formatAwsTable, runAwsScenarios, type AwsScenarioResult } from './judge';
import { AWS_LEFT_OUT, AWS_SCENARIOS, STATE_MACHINES, type ScenarioContext, type StateMachineName } from './scenarios';

export { AWS_SCENARIO_NAMES } from './scenarios';

/** Creates the suite's state machines on moto; answers their ARNs. */
async function createStateMachines(moto: MotoServer, runId: string): Promise<ScenarioContext> {
  const stateMachineArn = {} as Record<StateMachineName, string>;
  for (const [name, definition] of Object.entries(STATE_MACHINES) as [StateMachineName, object][]) {
    const answer = await moto.call({
      service: 'states',
      target: 'AWSStepFunctions.CreateStateMachine',
      jsonVersion: '1.0',
      body: {
        name: `conformance-${runId}-${name}`,
        definition: JSON.stringify(definition),
        roleArn: 'arn:aws:iam::123456789012:role/conformance-executions',
      },
    });
    const arn = answer.json?.stateMachineArn;
    if (answer.status !== 200 || typeof arn !== 'string')
      throw new Error(`CreateStateMachine ${name} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    stateMachineArn[name] = arn;
  }
  return { stateMachineArn };
}

/**
 * The standard AWS credentials and config files, written for the run: the `conformance` profile holds the key moto
 * checks signatures against, `wrong-secret` the same key ID with another secret.
 */
async function writeCredentialFiles(moto: MotoServer, dataDir: string): Promise<NodeJS.ProcessEnv> {
  const credentials = path.join(dataDir, 'aws-credentials');
  const config = path.join(dataDir, 'aws-config');
  const { accessKeyId, secretAccessKey } = moto.accessKey;
  await writeFile(
    credentials,
    `[${PROFILES.signing}]\naws_access_key_id = ${accessKeyId}\naws_secret_access_key = ${secretAccessKey}\n\n` +
      `[${PROFILES.wrongSecret}]\naws_access_key_id = ${accessKeyId}\naws_secret_access_key = not-${secretAccessKey}\n`,
    { mode: 0o600 },
  );
  await writeFile(config, '', { mode: 0o600 });
  return { AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: config };
}

/** Points the process's AWS credential chain at `files` (and nothing else) until the returned restore is called. */
function useCredentialFiles(files: NodeJS.ProcessEnv): () => void {
  const names = [
    'AWS_SHARED_CREDENTIALS_FILE',
    'AWS_CONFIG_FILE',
    'AWS_PROFILE',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
  ];
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  for (const name of names) delete process.env[name];
  Object.assign(process.env, files);
  return () => {
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  };
}

/** Runs the AWS scenarios (all, or those named in `only`) and prints the table and the scenarios left out. */
export async function runAwsSuite(
  options: SuiteOptions,
): Promise<SuiteOutcome & { results: readonly AwsScenarioResult[] }> {
  const log = options.quiet ? () => undefined : (line: string) => console.log(line);
  const scenarios =
    options.only === undefined ? AWS_SCENARIOS : AWS_SCENARIOS.filter((s) => options.only!.includes(s.name));
  const cleanups: (() => unknown)[] = [];
  try {
    const moto = await startMoto({ logFile: path.join(options.dataDir, 'moto.log') });
    cleanups.unshift(() => moto.stop());
    log(`conformance aws-json: ${MOTO_PACKAGE}==${MOTO_VERSION} at ${moto.url}, signatures checked`);
    const context = await createStateMachines(moto, options.runId);
    const files = await writeCredentialFiles(moto, options.dataDir);
    cleanups.unshift(useCredentialFiles(files));
    const proxies: Record<string, FaultProxy> = {};
    for (const scenario of scenarios) {
      const proxy = await startFaultProxy(moto.url, scenario.faults);
      cleanups.unshift(() => proxy.stop());
      proxies[scenario.name] = proxy;
    }
    const endpoints = Object.fromEntries(Object.entries(proxies).map(([name, proxy]) => [name, proxy.url]));
    const providers = await writeAwsAdapters(scenarios, endpoints, path.join(options.dataDir, 'adapters'));
    const harness = await startAsyncjob({
      temporalAddress: options.temporalAddress,
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      providers,
      env: files,
      dataDir: options.dataDir,
    });
    cleanups.unshift(() => harness.stop());
    log(`conformance aws-json: worker serving ${providers.length} adapters; starting ${scenarios.length}`);
    const results = await runAwsScenarios(harness, moto, proxies, scenarios, context, { runId: options.runId });

    const failing = results.filter((r) => !r.pass);
    const story = (r: (typeof results)[number]): string =>
      `== ${r.scenario.name} (${r.scenario.document}): ${r.pass ? 'pass' : `FAIL: ${r.why}`}\n${r.story}`;
    await writeFile(
      path.join(options.dataDir, 'stories.txt'),
      `${[...failing, ...results.filter((r) => r.pass)].map(story).join('\n\n')}\n`,
    );
    if (failing.length > 0 && options.stories) log(`${failing.map(story).join('\n\n')}\n`);
    log(formatAwsTable(results));
    log('');
    log(`left out (${AWS_LEFT_OUT.length}, not counted):`);
    for (const e of AWS_LEFT_OUT) log(`  ${e.scenario}: ${e.reason}`);
    return {
      passed: results.length - failing.length,
      total: results.length,
      ok: failing.length === 0,
      keep: failing.length > 0,
      results,
    };
  } finally {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}
