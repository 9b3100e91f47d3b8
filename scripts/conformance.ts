/**
 * `npm run conformance`: two suites of real asynchronous-job servers driven through asyncjob as a user would (an
 * asyncjob worker on a Temporal dev server of its own, or `--temporal HOST:PORT`, one operation per scenario
 * started with `AsyncJobClient`, each outcome judged against the scenario's expected one):
 * - `azure-lro`: Azure's public LRO conformance server (`@microsoft.azure/autorest.testserver`, pinned in
 *   scripts/conformance/testserver.ts), one adapter per scenario from the templates in `test/conformance/`;
 * - `aws-json`: moto's server (PyPI `moto[server]`, pinned in scripts/conformance/moto.ts) with signature checking
 *   on, the AWS documents of `examples/providers/` (SigV4 on every request), faults moto never plays by itself
 *   (throttling, a lost create answer) played by a loopback proxy.
 *
 * Prints each suite's table and, last, one line per suite: `conformance <suite>: P of N scenarios passed`. Exits 0
 * when every counted scenario of every suite passes, 1 otherwise, 2 on a usage or set-up error. Options:
 * `--suite azure-lro|aws-json` runs one suite; `--only A,B` runs some scenarios (of either suite); `--stories`
 * prints the audit story of each failing scenario; `--keep` keeps the data directory (store, artifacts, adapter
 * documents, worker and server logs), which is also kept when a scenario fails; `--install-only` installs both
 * servers into `.conformance/` (what `.ci/run` does before `npm test`) and exits.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startDevServer, type DevServer } from '../src/dev/temporal-server';
import { AWS_SCENARIO_NAMES, runAwsSuite } from './conformance/aws/suite';
import { AZURE_SCENARIO_NAMES, runAzureSuite, type SuiteOptions, type SuiteOutcome } from './conformance/azure-suite';
import { ensureMotoInstalled, MOTO_PACKAGE, MOTO_VERSION } from './conformance/moto';
import { ensureTestServerInstalled, TEST_SERVER_PACKAGE, TEST_SERVER_VERSION } from './conformance/testserver';

/** The suites, in the order they run. */
const SUITES = {
  'azure-lro': { names: AZURE_SCENARIO_NAMES, run: runAzureSuite },
  'aws-json': { names: AWS_SCENARIO_NAMES, run: runAwsSuite },
} as const;
type SuiteName = keyof typeof SUITES;
const SUITE_NAMES = Object.keys(SUITES) as SuiteName[];

interface Options {
  installOnly: boolean;
  suites: SuiteName[];
  only?: string[];
  temporalAddress?: string;
  stories: boolean;
  keep: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = { installOnly: false, suites: SUITE_NAMES, stories: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.includes('=') ? argv[i]!.split('=', 2) : [argv[i]!, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const list = (): string[] =>
      value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    if (flag === '--only') options.only = list();
    else if (flag === '--suite') {
      const named = list();
      const unknown = named.filter((s) => !(SUITE_NAMES as string[]).includes(s));
      if (unknown.length > 0) throw new Error(`unknown suite(s) ${unknown.join(', ')} (${SUITE_NAMES.join(', ')})`);
      options.suites = named as SuiteName[];
    } else if (flag === '--temporal') options.temporalAddress = value();
    else if (flag === '--stories') options.stories = true;
    else if (flag === '--keep') options.keep = true;
    else if (flag === '--install-only') options.installOnly = true;
    else
      throw new Error(
        `unknown option ${flag} (use --suite ${SUITE_NAMES.join('|')}, --only A,B, --temporal HOST:PORT, --stories, --keep, --install-only)`,
      );
  }
  if (options.only !== undefined) {
    const known = new Set(options.suites.flatMap((s) => SUITES[s].names));
    const unknown = options.only.filter((name) => !known.has(name));
    if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
    // A suite none of whose scenarios is named is not run.
    options.suites = options.suites.filter((s) => SUITES[s].names.some((n) => options.only!.includes(n)));
  }
  return options;
}

async function install(): Promise<void> {
  const azure = await ensureTestServerInstalled((line) => console.log(line));
  console.log(
    `conformance: ${TEST_SERVER_PACKAGE}@${TEST_SERVER_VERSION} ${azure === 'present' ? 'already installed' : 'installed'} in .conformance/`,
  );
  const moto = await ensureMotoInstalled((line) => console.log(line));
  console.log(
    `conformance: ${MOTO_PACKAGE}==${MOTO_VERSION} ${moto === 'present' ? 'already installed' : 'installed'} in .conformance/moto/`,
  );
}

async function main(options: Options): Promise<number> {
  const began = Date.now();
  await install();
  if (options.installOnly) return 0;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'asyncjob-conformance-'));
  let temporal: DevServer | undefined;
  let keep = options.keep;
  const outcomes: [SuiteName, SuiteOutcome][] = [];
  try {
    if (options.temporalAddress === undefined)
      temporal = await startDevServer({ logFile: path.join(dataDir, 'temporal.log') });
    const temporalAddress = options.temporalAddress ?? temporal!.address;
    console.log(`conformance: Temporal at ${temporalAddress}, data in ${dataDir}`);
    const runId = randomBytes(4).toString('hex');
    for (const suite of options.suites) {
      const suiteDir = path.join(dataDir, suite);
      await mkdir(suiteDir, { recursive: true });
      const suiteOptions: SuiteOptions = {
        temporalAddress,
        dataDir: suiteDir,
        runId,
        stories: options.stories,
        ...(options.only !== undefined ? { only: options.only } : {}),
      };
      console.log('');
      const outcome = await SUITES[suite].run(suiteOptions);
      keep ||= outcome.keep;
      outcomes.push([suite, outcome]);
    }
  } finally {
    await temporal?.stop().catch(() => undefined);
    if (!keep) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
  console.log('');
  if (keep) console.log(`data kept in ${dataDir} (per suite: stories.txt, worker.log and the server's log)`);
  console.log(`run time ${((Date.now() - began) / 1000).toFixed(1)} s`);
  for (const [suite, outcome] of outcomes)
    console.log(`conformance ${suite}: ${outcome.passed} of ${outcome.total} scenarios passed`);
  return outcomes.every(([, outcome]) => outcome.ok) ? 0 : 1;
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
