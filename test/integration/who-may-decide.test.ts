/**
 * docs/operating.md's "Who may decide", walked on the real dev server: a decider makes a key with the documented
 * `asyncjob keys new` (the package's bin), the documented policy file lists it, and a worker holds that policy.
 * An operation escalates; the unsigned `cancel_at_provider` the Web UI's signal form sends is refused with the
 * documented command to run instead, recorded in the journal; that command, run as written, signs the decision
 * with the key file, prints what the document shows and is accepted, journalled with its route, rule and
 * signature; and `asyncjob audit verify` finds the store intact.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import type { Decision } from '../../src/core/escalation';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';
import { startSimulator, type Simulator } from '../../src/simulator';
import { decideSignal } from '../../src/workflows/messages';
import { docCommand, promptedBlock } from '../docs/doc-commands';
import { outputMismatch } from '../docs/output-match';
import { ROOT, runShell } from '../docs/shell';
import { uniqueId } from '../setup/temporal';
import { startDocumentWorker, type DocumentWorker } from '../workflows/document-worker';
import { auditVerifyWithTemporal, runOn } from './front-door-cli';

const TOKEN = `sim-secret-${Math.random().toString(36).slice(2)}`;
const DOC = 'docs/operating.md';
const PROVIDER = 'reports';
/** The operation the document decides on; no other test of the run names it. */
const OPERATION = 'op-46';
const KEYS_NEW = 'asyncjob keys new --for alice@example.com';
const DECIDE =
  'asyncjob decide op-46 --option cancel_at_provider --by alice@example.com --reason "the customer withdrew the order" --sign';

/** The document's text, and the first fenced block of `language` after `heading`. */
function documentedBlock(heading: string, language: string): string {
  const text = readFileSync(path.join(ROOT, DOC), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `${DOC} has ${heading}`).toBeGreaterThan(-1);
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```').exec(text.slice(at));
  expect(block, `${DOC}: a ${language} block under ${heading}`).not.toBeNull();
  return block![1]!;
}

/** A documented command line as argv (without `asyncjob`): words split at spaces outside double quotes. */
function argvOf(text: string): string[] {
  const words = text.match(/"[^"]*"|[^\s"]+/g) ?? [];
  return words.map((word) => (word.startsWith('"') ? word.slice(1, -1) : word)).slice(1);
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('who may decide, as docs/operating.md tells an operator (D2, D3, D5)', () => {
  let dir: string;
  let keys: string;
  let keyId: string;
  let sim: Simulator;
  let worker: DocumentWorker;
  const id = uniqueId('deciders').toLowerCase();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-who-may-decide-'));
    keys = path.join(dir, 'keys');
    // Making a key: the documented command, through the package's bin, into this run's keys directory.
    const made = await runShell(docCommand(DOC, KEYS_NEW).text, {
      env: { ASYNCJOB_DECIDER_KEYS_DIR: keys },
      timeoutMs: 120_000,
    });
    expect(made.code, made.stderr).toBe(0);
    keyId = /^public key: (ed25519:[0-9a-f]{64})$/m.exec(made.stdout)![1]!;
    // The documented policy, its example key replaced by the one just made, as the operator adds it.
    const documented = documentedBlock('### The `deciders` section of the policy file', 'yaml');
    const policyFile = path.join(dir, 'policy.yaml');
    await writeFile(policyFile, documented.replace(/ed25519:[0-9a-f]{64}/, keyId));
    sim = await startSimulator({
      dialect: 'rest',
      token: TOKEN,
      seed: 13,
      scenario: { scripts: { forever: { steps: [{ state: 'running' }] } } },
    });
    worker = await startDocumentWorker({
      taskQueue: `wf-${id}`,
      dataDir: dir,
      providers: [{ name: PROVIDER, path: 'rest' }],
      baseUrls: { [PROVIDER]: sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN, ASYNCJOB_SIMULATOR_URL: sim.url },
      forbiddenValues: [TOKEN],
      deciders: loadDeciderPolicy(policyFile),
    });
  }, 240_000);

  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  const decisions = async () =>
    (await worker.store.entries(OPERATION)).map((e) => e.entry.body).filter((b) => b.kind === 'decision');

  it('D3, D5: an unsigned Web UI cancel is refused with the documented command; that command signs it and it is accepted', async () => {
    await worker.client.start({
      operationId: OPERATION,
      provider: PROVIDER,
      payload: { report: 'sales', scenario: 'forever' },
      startedBy: 'service:billing',
      authorisedBy: 'alice@example.com',
      createDeadline: { afterMs: 4_000 },
      // The job runs on: the operation escalates deadline_exceeded after four seconds.
      resultDeadline: { afterMs: 4_000 },
      policy: { baseDelayMs: 20, maxDelayMs: 200, maxHintMs: 60_000 },
    });
    await until(async () => (await worker.client.get(OPERATION)).localState === 'escalated');
    const escalation = (await worker.client.get(OPERATION)).escalation!;
    expect(escalation.options.map((o) => o.option)).toContain('cancel_at_provider');

    // The Web UI's signal form: the same decision, unsigned. Refused and recorded with the command to run.
    const unsigned: Decision = {
      option: 'cancel_at_provider',
      approvedBy: 'alice@example.com',
      reason: 'the customer withdrew the order',
    };
    await worker.env.client.workflow.getHandle(OPERATION).signal(decideSignal, unsigned);
    await until(async () => (await decisions()).length > 0);
    const refusal = documentedBlock('### An unsigned decision where a signature is required', 'text');
    expect(await decisions()).toEqual([
      expect.objectContaining({ accepted: false, route: 'web-ui', rejectionReason: refusal }),
    ]);
    expect((await worker.client.get(OPERATION)).localState).toBe('escalated');

    // Deciding signed: the documented command, run as written with the key made above.
    expect(docCommand(DOC, DECIDE).text).toBe(DECIDE);
    const decided = await runOn(worker.client, argvOf(DECIDE), { ASYNCJOB_DECIDER_KEYS_DIR: keys });
    expect(decided.stderr).toBe('');
    expect(decided.code).toBe(EXIT.ok);
    const [shown] = promptedBlock(DOC, DECIDE);
    expect(outputMismatch(shown!.output, decided.stdout)).toBeUndefined();
    expect(decided.stdout).toContain(`signed with ${keyId}`);
    const accepted = (await decisions()).find((d) => d.kind === 'decision' && d.accepted);
    expect(accepted).toMatchObject({
      decision: 'cancel_at_provider',
      approvedBy: 'alice@example.com',
      route: 'cli',
      escalation: escalation.id,
      policy: { rule: 'alice-may-cancel' },
      signature: { keyId },
    });
    await until(async () => (await worker.client.get(OPERATION)).localState === 'cancelled');
  });

  it('D5: audit verify checks the signed decision again and finds the store intact', async () => {
    const { code, output } = await auditVerifyWithTemporal(OPERATION, path.join(dir, 'asyncjob.db'), `wf-${id}`);
    expect(code, output).toBe(0);
  });
});
