/**
 * The registry of documented commands: every command line README.md and docs/*.md tell a user to run (see
 * markdown-commands.ts for how they are read), keyed by file and text, and what answers for it: the test file that
 * runs it, the line of `.ci/run` that runs it (too heavy for `npm test`), or why it is only illustrative (a
 * synopsis with placeholders, a mention of a command run elsewhere). test/docs/commands.test.ts fails on a
 * documented command without an entry and on an entry whose command is no longer documented.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { commandKey, extractCommands, type DocCommand, type DocExtraction } from './markdown-commands';
import { ROOT } from './shell';

/** Who answers for a documented command. */
export type Handling =
  /** A test file runs it as written (with only the substitutions below); the file contains `mentions`. */
  | { test: string; mentions?: string }
  /** `.ci/run` runs it: the script contains `line`. */
  | { ci: string }
  /** Not run: the reason. */
  | { illustrative: string };

const UNIT = 'test/docs/commands.test.ts';
const INTEGRATION = 'test/integration/doc-commands.test.ts';
const PACKAGE = 'test/package/installed.test.ts';
/** Operation variables on the command line, against a worker serving a document that declares them. */
const VARIABLES = 'test/integration/operation-variables.test.ts';
/** `npm start` beside a busy CPU, on moved ports. */
const NPM_START = 'test/integration/npm-start.test.ts';
/** Deciders: a key made, a policy listing it, a decision signed against a worker holding that policy. */
const DECIDERS = 'test/integration/who-may-decide.test.ts';
/** Results in an object store: a worker on moto's S3, the result read back verified, tampered, audited. */
const OBJECT_STORE = 'test/integration/object-store-results.test.ts';
/** The child-workflow example, run as written against a worker serving demo-reports. */
const CHILD_WORKFLOW_EXAMPLE = 'test/integration/child-workflow-example.test.ts';
/** The real bin's worker and doctor with a Nexus endpoint set (the flag, ASYNCJOB_NEXUS_ENDPOINT). */
const NEXUS_WORKER_PROCESS = 'test/integration/nexus-worker-process.test.ts';

const SYNOPSIS = 'a synopsis or mention with placeholders; the documented examples of the same command run';

/** The documents read, relative to the root: README.md, docs/*.md, examples/**\/README.md. */
function documents(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const examples = readdirSync(path.join(ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f) === 'README.md')
    .map((f) => `examples/${f}`);
  return ['README.md', ...docs.sort(), ...examples.sort()];
}

/** Every document's commands and illustrative blocks. */
export function extractAll(): DocExtraction[] {
  return documents().map((file) => extractCommands(file, readFileSync(path.join(ROOT, file), 'utf8')));
}

/** The documented command `text` of `file`, first occurrence; throws when the document no longer shows it. */
export function docCommand(file: string, text: string): DocCommand {
  const found = extractAll()
    .flatMap((x) => x.commands)
    .find((c) => c.file === file && c.text === text);
  if (!found) throw new Error(`${file} no longer shows the command: ${text}`);
  return found;
}

/** The commands of a `$ ` block: the command at `file`/`text` and the prompted commands after it in its block. */
export function promptedBlock(file: string, text: string): DocCommand[] {
  const first = docCommand(file, text);
  const all = extractAll()
    .flatMap((x) => x.commands)
    .filter((c) => c.file === file && c.kind === 'block' && c.line >= first.line);
  const block: DocCommand[] = [];
  for (const c of all) {
    // Consecutive prompted commands: each starts right after the previous one's output.
    const previous = block.at(-1);
    if (previous && c.line !== previous.line + 1 + previous.output.length) break;
    block.push(c);
  }
  return block;
}

/**
 * What may differ between a documented command and the command a test runs: the kinds of substitution, each
 * with what it replaces. A test names the kind of every substitution it makes (see {@link substitute}).
 */
const SUBSTITUTIONS = {
  port: 'a documented port (8080, 8765, N) becomes a free port of the test machine',
  dataDir: 'a documented directory (/app, /srv/asyncjob) or data file becomes one in a temporary directory',
  placeholder: 'a placeholder word (FILE, ID, YOU, WHY) becomes a value of the run',
  elided: 'the `...` of a command the document shortened becomes the flags it stands for, as shown just above',
} as const;

/** One substitution: the text replaced (every occurrence), its replacement, and its declared kind. */
export type Substitution = [from: string, to: string, kind: keyof typeof SUBSTITUTIONS];

/** Applies substitutions to a command (and to its documented output); each `from` must occur in the command. */
export function substitute(text: string, substitutions: Substitution[], mustOccur = true): string {
  let out = text;
  for (const [from, to, kind] of substitutions) {
    if (!(kind in SUBSTITUTIONS)) throw new Error(`undeclared substitution kind ${kind}`);
    if (mustOccur && !out.includes(from)) throw new Error(`"${from}" does not occur in: ${text}`);
    out = out.split(from).join(to);
  }
  return out;
}

type Entry = [files: string[], text: string, handling: Handling];

const ENTRIES: Entry[] = [
  // The quick start, and npm scripts too heavy for npm test: .ci/run runs them.
  [
    ['README.md'],
    'npm ci && npm start',
    { illustrative: 'npm ci is run by .ci/run; npm start is run alone (the entry below)' },
  ],
  [['README.md', 'docs/reliability.md'], 'npm test', { ci: '\nnpm test\n' }],
  [['README.md'], 'npm ci', { ci: '\nnpm ci --no-audit --no-fund\n' }],
  [['README.md', 'docs/writing-an-adapter.md'], 'npm run conformance', { ci: '\nnpm run --silent conformance\n' }],
  [
    ['README.md', 'docs/operating.md'],
    'npm run test:cluster',
    { ci: '\nnpm run --silent test:cluster -- --count 200 --hosts\n' },
  ],
  [
    ['docs/operating.md'],
    'npm run test:cluster -- --hosts',
    { ci: '\nnpm run --silent test:cluster -- --count 200 --hosts\n' },
  ],
  [['docs/reliability.md'], 'npm run soak', { ci: '\nnpm run --silent soak -- --count 200' }],
  [['README.md'], 'npm run typecheck', { ci: '\nnpm test\n' }],
  [['README.md'], 'npm run lint', { ci: '\nnpm test\n' }],
  [
    ['README.md'],
    'eval "$(bash scripts/postgres-for-tests.sh start)" && npm test',
    { ci: '\neval "$(bash scripts/postgres-for-tests.sh start)"\n' },
  ],
  [
    ['README.md'],
    'npm run bench',
    { illustrative: 'about 100 minutes on 2 cores; test/bench checks its code-version record' },
  ],
  [['README.md'], 'eval "$(bash scripts/cluster.sh start)"', { ci: '\nnpm run --silent test:cluster' }],
  [['docs/operating.md'], 'eval "$(bash scripts/cluster.sh start)"', { ci: '\nnpm run --silent test:cluster' }],
  [['README.md'], 'bash scripts/cluster.sh stop', { ci: '\nnpm run --silent test:cluster' }],
  [['docs/operating.md'], 'bash scripts/cluster.sh restart-server', { ci: '\nnpm run --silent test:cluster' }],
  [
    ['README.md'],
    'ASYNCJOB_RECORD_HISTORIES=1 npx vitest run test/workflows/record-histories.test.ts',
    {
      illustrative: 'rewrites the committed histories after an intended change of the workflow; replay tests read them',
    },
  ],
  [
    ['docs/writing-an-adapter.md'],
    'npm run schema',
    { illustrative: 'rewrites schema/; test/adapters checks the committed file equals its output' },
  ],

  // npm start and the dev server.
  [
    ['README.md', 'docs/cli.md', 'docs/configuration.md', 'docs/child-workflows.md'],
    'npm start',
    // Run on free ports through the settings the README gives for that, not on 7233 and 8233.
    { test: NPM_START, mentions: 'ASYNCJOB_TEMPORAL_PORT=17233 ASYNCJOB_UI_PORT=18233 npm start' },
  ],
  [['README.md'], 'ASYNCJOB_TEMPORAL_PORT=17233 ASYNCJOB_UI_PORT=18233 npm start', { test: NPM_START }],
  [['README.md'], 'export TEMPORAL_ADDRESS=127.0.0.1:17233', { test: NPM_START }],
  [['README.md'], 'npm run temporal -- start --port N --ui-port N [--db FILE]', { test: UNIT }],
  [
    ['README.md', 'docs/configuration.md'],
    'npm run temporal -- start',
    { illustrative: 'the same command on the default ports 7233/8233; run with free ports (the entry above)' },
  ],
  [['README.md'], 'npm run temporal -- ensure', { test: UNIT }],
  [['docs/configuration.md'], 'npm run temporal', { illustrative: SYNOPSIS }],
  [
    ['docs/cli.md', 'docs/configuration.md'],
    'asyncjob dev',
    { illustrative: 'the same demo as npm start, which runs' },
  ],

  // Building and installing the package.
  [['README.md', 'docs/cli.md'], 'npm run build', { test: PACKAGE }],
  [['README.md'], 'npm install /path/to/asyncjob', { test: PACKAGE, mentions: "'npm install /path/to/asyncjob'" }],

  // The README's escalation walk-through, against a worker serving demo-reports.
  [
    ['README.md'],
    `npx asyncjob start --provider demo-reports --operation-id try-review-20261201t083503-901e --payload '{"report":"quarterly-review","scenario":"review"}' --started-by you --authorised-by you --create-deadline 1m --result-deadline 30m`,
    { test: INTEGRATION, mentions: 'npx asyncjob start --provider demo-reports --operation-id try-review' },
  ],
  // The walk-through's test names the operation ID once and builds each command from it.
  [
    ['README.md'],
    'npx asyncjob watch try-review-20261201t083503-901e',
    { test: INTEGRATION, mentions: 'npx asyncjob watch ${id}' },
  ],
  [
    ['README.md'],
    'npx asyncjob decide try-review-20261201t083503-901e',
    { test: INTEGRATION, mentions: 'npx asyncjob decide ${id}`' },
  ],
  [
    ['README.md'],
    'npx asyncjob decide try-review-20261201t083503-901e --option extend --extend 15m --checks 4 --by you --reason "reviewed by hand"',
    {
      test: INTEGRATION,
      mentions:
        'npx asyncjob decide ${id} --option extend --extend 15m --checks 4 --by you --reason "reviewed by hand"',
    },
  ],

  // The command line's reference.
  [['docs/cli.md'], 'npx asyncjob help', { test: UNIT }],
  [['docs/cli.md'], 'npx asyncjob help decide', { test: UNIT }],
  [
    ['docs/cli.md'],
    `asyncjob start --provider demo-reports --operation-id op-42 --payload '{"report":"sales"}' --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h --wait`,
    { test: INTEGRATION, mentions: 'asyncjob start --provider demo-reports --operation-id op-42' },
  ],
  [['docs/cli.md'], 'asyncjob start --provider rest --operation-id op-43 ...', { test: INTEGRATION }],
  [['docs/cli.md'], 'echo $?', { illustrative: 'prints the exit code of the $ command above it; run with that block' }],
  [
    ['docs/cli.md'],
    'asyncjob start --provider demo-reports --operation-id op-42 ... --started-by service:other --result-deadline 2h',
    { test: INTEGRATION },
  ],
  [
    ['docs/cli.md'],
    `asyncjob start --provider reports --operation-id op-44 --payload '{"report":"sales"}' --var version=v1 --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h`,
    { test: VARIABLES, mentions: 'asyncjob start --provider reports --operation-id op-44' },
  ],
  [
    ['docs/cli.md'],
    'asyncjob start --provider reports --operation-id op-45 ... --var versoin=v1',
    { test: VARIABLES, mentions: 'asyncjob start --provider reports --operation-id op-45' },
  ],
  [['docs/cli.md'], 'asyncjob list --provider demo-reports --state succeeded', { test: INTEGRATION }],
  [['docs/cli.md'], 'asyncjob adapter validate test/conformance/azure-put.yaml broken.yaml', { test: UNIT }],
  [['docs/cli.md'], 'asyncjob adapter explain test/conformance/azure-put.yaml', { test: UNIT }],
  [['docs/cli.md', 'docs/operating.md'], 'asyncjob bundle --out /app/workflow-bundle.js', { test: INTEGRATION }],
  [
    ['docs/cli.md', 'docs/operating.md'],
    'asyncjob replay-check --bundle /app/workflow-bundle.js',
    { test: INTEGRATION },
  ],
  [['docs/cli.md'], 'asyncjob replay-check --history op-42.json op-43.json', { test: INTEGRATION }],
  [
    ['README.md', 'docs/configuration.md'],
    'asyncjob replay-check',
    { test: INTEGRATION, mentions: "'asyncjob replay-check'" },
  ],
  [
    ['docs/configuration.md'],
    'echo $?',
    { illustrative: 'prints the exit code of the $ command above it; run with that block' },
  ],

  // Setup checks and the worker.
  [
    ['README.md', 'docs/cli.md', 'docs/configuration.md'],
    'asyncjob doctor',
    { test: INTEGRATION, mentions: "'asyncjob doctor'" },
  ],
  [
    ['docs/operating.md', 'docs/writing-an-adapter.md', 'docs/rules.md'],
    'asyncjob doctor',
    { test: INTEGRATION, mentions: "'asyncjob doctor'" },
  ],
  [['README.md', 'docs/cli.md', 'docs/configuration.md'], 'asyncjob doctor [--json]', { illustrative: SYNOPSIS }],
  [
    ['README.md', 'docs/cli.md', 'docs/configuration.md', 'docs/operating.md'],
    'asyncjob worker',
    { test: INTEGRATION, mentions: "'asyncjob worker'" },
  ],
  [['README.md', 'docs/configuration.md'], 'asyncjob worker --help', { test: UNIT }],
  [
    ['docs/configuration.md'],
    'ASYNCJOB_PROVIDERS=./providers/reports.yaml ASYNCJOB_WEBHOOK_PORT=8088 asyncjob worker',
    { test: UNIT },
  ],
  [
    ['README.md'],
    'ASYNCJOB_PROVIDERS=./providers/vm-images.yaml AZURE_ACCESS_TOKEN=… asyncjob worker',
    {
      illustrative:
        'serves an Azure management endpoint the test machine cannot reach; the same form runs with demo-reports',
    },
  ],
  [['README.md'], 'npx asyncjob bundle --out workflow-bundle.js', { test: INTEGRATION }],
  [['docs/configuration.md'], 'asyncjob bundle --out FILE', { illustrative: SYNOPSIS }],
  [['docs/cli.md', 'docs/configuration.md', 'docs/operating.md'], 'asyncjob bundle', { illustrative: SYNOPSIS }],
  [['docs/configuration.md'], 'asyncjob status op-42 --json', { test: INTEGRATION }],
  [['docs/configuration.md'], 'asyncjob start ... --verbose', { illustrative: 'a flag example in the settings table' }],
  [['docs/configuration.md'], 'asyncjob list --escalated', { test: INTEGRATION }],
  [
    ['docs/operating.md'],
    'asyncjob list --escalated',
    { illustrative: 'the same command as in docs/configuration.md, which runs' },
  ],

  // Adapters.
  [['README.md'], 'asyncjob adapter validate FILE...', { illustrative: SYNOPSIS }],
  [['README.md'], 'asyncjob adapter explain FILE', { illustrative: SYNOPSIS }],
  [['docs/writing-an-adapter.md'], 'asyncjob adapter validate contracts/*.yaml', { test: UNIT }],
  [['docs/writing-an-adapter.md'], 'asyncjob adapter explain contracts/acme-exports.yaml', { test: UNIT }],
  [['docs/writing-an-adapter.md'], 'asyncjob adapter explain rest', { test: UNIT }],
  [
    ['docs/writing-an-adapter.md'],
    'asyncjob adapter validate contracts/acme-exports.yaml contracts/broken.yaml',
    { test: UNIT },
  ],
  [['docs/writing-an-adapter.md'], 'asyncjob adapter validate', { illustrative: SYNOPSIS }],
  [['docs/writing-an-adapter.md'], 'asyncjob adapter explain', { illustrative: SYNOPSIS }],
  [['docs/writing-an-adapter.md'], 'asyncjob start --provider NAME', { illustrative: SYNOPSIS }],
  [['docs/rules.md'], 'asyncjob start', { illustrative: SYNOPSIS }],

  // The simulator.
  [['README.md'], 'asyncjob simulate --port 8080 --scenario examples/scenarios/rest-mixed.yaml', { test: UNIT }],
  [['docs/cli.md'], 'asyncjob simulate ...', { illustrative: SYNOPSIS }],
  [['docs/configuration.md'], 'asyncjob simulate', { illustrative: SYNOPSIS }],

  // Audit.
  [['README.md', 'docs/agents.md', 'docs/operating.md'], 'asyncjob audit show ID', { test: INTEGRATION }],
  [['README.md'], 'asyncjob audit verify [--operation ID]', { test: INTEGRATION }],
  [['README.md'], 'asyncjob audit checkpoint --out FILE', { test: INTEGRATION }],
  [['docs/reliability.md'], 'asyncjob audit checkpoint [--out FILE]', { illustrative: SYNOPSIS }],
  [
    ['docs/reliability.md', 'docs/rules.md', 'docs/operating.md'],
    'asyncjob audit verify',
    { test: INTEGRATION, mentions: "'asyncjob audit verify'" },
  ],
  [['docs/operating.md'], 'asyncjob audit verify --with-temporal', { test: INTEGRATION }],
  [['docs/operating.md', 'docs/rules.md'], 'asyncjob audit show', { illustrative: SYNOPSIS }],
  [['README.md'], 'asyncjob audit', { illustrative: SYNOPSIS }],
  [['docs/cli.md'], 'asyncjob audit verify|checkpoint|show ...', { illustrative: SYNOPSIS }],

  // Agents.
  [['README.md'], 'asyncjob mcp --policy FILE', { illustrative: SYNOPSIS }],
  [
    ['README.md', 'docs/agents.md', 'docs/cli.md', 'docs/rules.md', 'docs/operating.md'],
    'asyncjob mcp',
    { illustrative: SYNOPSIS },
  ],
  [['docs/agents.md'], 'asyncjob mcp --policy agents.yaml', { test: INTEGRATION }],
  [['docs/agents.md'], 'asyncjob mcp --policy agents.yaml --identity agent:x', { test: INTEGRATION }],
  [['docs/agents.md'], 'asyncjob mcp --policy agents.yaml --http --port 8765', { test: INTEGRATION }],
  [['docs/agents.md'], 'asyncjob list --escalated --reason extension_requested', { test: INTEGRATION }],

  // Deciders: keys and signed decisions.
  [['README.md', 'docs/cli.md', 'docs/operating.md'], 'asyncjob keys new --for alice@example.com', { test: UNIT }],
  [
    ['docs/operating.md'],
    'asyncjob decide op-46 --option cancel_at_provider --by alice@example.com --reason "the customer withdrew the order" --sign',
    { test: DECIDERS },
  ],
  [['docs/cli.md'], 'asyncjob keys new', { illustrative: SYNOPSIS }],
  [['docs/rules.md'], 'asyncjob decide --sign', { illustrative: SYNOPSIS }],
  [['docs/operating.md'], 'asyncjob decide ... --sign', { illustrative: SYNOPSIS }],
  [['README.md'], 'asyncjob decide … --sign', { illustrative: SYNOPSIS }],

  // Results in an object store.
  [['docs/operating.md'], 'asyncjob result report-2026-11 --out report.json', { test: OBJECT_STORE }],
  [['docs/operating.md'], 'asyncjob audit verify --operation report-2026-11', { test: OBJECT_STORE }],

  // Encrypted payloads: the codec server the Web UI decodes through.
  [
    ['docs/operating.md', 'docs/cli.md'],
    'asyncjob codec-server --port 8888',
    { test: 'test/integration/encrypted-payloads.test.ts' },
  ],
  [['docs/configuration.md'], 'asyncjob codec-server', { illustrative: SYNOPSIS }],

  // Running an operation from a user's workflow.
  [
    ['docs/child-workflows.md', 'README.md'],
    'npx tsx examples/child-workflow/run.ts',
    { test: CHILD_WORKFLOW_EXAMPLE },
  ],
  [['docs/child-workflows.md'], 'asyncjob status', { illustrative: SYNOPSIS }],
  [['docs/child-workflows.md'], 'asyncjob decide', { illustrative: SYNOPSIS }],

  // Calling asyncjob through Nexus.
  [
    ['docs/nexus.md', 'README.md'],
    'npx tsx examples/nexus-caller/run.ts',
    { test: 'test/integration/nexus-caller-example.test.ts' },
  ],
  [
    ['docs/nexus.md'],
    'temporal operator namespace create --namespace asyncjob-callers',
    { test: 'test/nexus/setup-commands.test.ts' },
  ],
  [
    ['docs/nexus.md'],
    'temporal operator nexus endpoint create --name asyncjob --target-namespace default --target-task-queue asyncjob',
    { test: 'test/nexus/setup-commands.test.ts' },
  ],
  [
    ['docs/nexus.md'],
    'asyncjob worker --nexus-endpoint asyncjob',
    { test: NEXUS_WORKER_PROCESS, mentions: "['worker', '--nexus-endpoint', servedEndpoint]" },
  ],
  [
    ['docs/nexus.md'],
    'npm start',
    { test: NPM_START, mentions: 'ASYNCJOB_TEMPORAL_PORT=17233 ASYNCJOB_UI_PORT=18233 npm start' },
  ],
  [['docs/nexus.md'], 'asyncjob doctor', { test: NEXUS_WORKER_PROCESS, mentions: "runAsyncjob(['doctor']" }],
  [
    ['docs/nexus.md'],
    'npm run schema',
    { illustrative: 'rewrites schema/; test/nexus/schemas.test.ts checks the committed files equal its output' },
  ],
  [['docs/nexus.md'], 'npm run temporal', { illustrative: SYNOPSIS }],
  [['docs/nexus.md'], 'asyncjob decide', { illustrative: SYNOPSIS }],

  // Mentions of commands by name or with placeholders.
  [
    ['README.md', 'docs/cli.md'],
    'bin/asyncjob',
    { illustrative: 'the entry itself; every asyncjob command of these tests runs through it' },
  ],
  [['README.md'], 'npx asyncjob …', { illustrative: SYNOPSIS }],
  [
    ['README.md'],
    'asyncjob start | status | watch | result | cancel | decide | list | audit show | audit verify | audit checkpoint | adapter validate | adapter explain | doctor | mcp | simulate | worker | bundle | replay-check | keys new | codec-server | dev',
    { illustrative: 'the list of commands' },
  ],
  [['README.md', 'docs/operating.md', 'docs/rules.md'], 'asyncjob decide', { illustrative: SYNOPSIS }],
  [['README.md', 'docs/agents.md', 'docs/cli.md'], 'asyncjob decide ID', { illustrative: SYNOPSIS }],
  [['docs/operating.md'], 'asyncjob status ID', { illustrative: SYNOPSIS }],
  [['docs/operating.md'], 'asyncjob status', { illustrative: SYNOPSIS }],
  [['docs/operating.md'], 'asyncjob cancel', { illustrative: SYNOPSIS }],
];

/** The registry: `file: command` to its handling. */
export const REGISTRY: ReadonlyMap<string, Handling> = new Map(
  ENTRIES.flatMap(([files, text, handling]) => files.map((file) => [commandKey(file, text), handling] as const)),
);
