/**
 * Operation variables on the real dev server (C5, I2): a worker serves a document whose create path is built from
 * a declared variable (`/{version}/jobs`, the simulator's rest dialect), started through the command line as
 * docs/cli.md shows it and through the client. The request reaches the path the variable names, the record holds
 * the variables with the adapter's default applied and `status` shows them; a value the adapter refuses ends the
 * operation failed before any provider call, journalled; a command line that can read the document refuses at once;
 * and a join with other variables is refused naming them.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AsyncJobClient, JoinMismatchError } from '../../src/client';
import { EXIT } from '../../src/cli/exit-codes';
import { startFingerprint } from '../../src/core/fingerprint';
import type { StartRequest } from '../../src/core/operation';
import { startSimulator, type Simulator } from '../../src/simulator';
import { docCommand, substitute } from '../docs/doc-commands';
import { uniqueId } from '../setup/temporal';
import { auditVerifyWithTemporal, runOn } from './front-door-cli';
import { startDocumentWorker, writeRestVariant, type DocumentWorker } from '../workflows/document-worker';

const TOKEN = `sim-secret-${Math.random().toString(36).slice(2)}`;
/** The provider docs/cli.md names; its queue is scoped by this file's own task queue (F9). */
const PROVIDER = 'reports';
/** The flags the docs' shortened start (`op-45 ...`) stands for: those of the full example above it. */
const ELIDED_45 = `--payload '{"report":"sales"}' --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h`;

/** The rest preset with its create path built from a declared `version`, and a `region` with a default. */
function versionedContract(dir: string): Promise<string> {
  return writeRestVariant(dir, PROVIDER, (preset) => ({
    ...preset,
    variables: {
      version: { pattern: 'v[0-9]+', required: true, description: 'the API version in the path' },
      region: { default: 'eu-west-1' },
    },
    create: { ...preset.create, path: '/{version}/jobs' },
  }));
}

/** A documented command line as argv: words split at spaces outside single quotes (the docs' only quoting). */
function argvOf(text: string): string[] {
  const words = text.match(/'[^']*'|[^\s']+/g) ?? [];
  return words.map((word) => (word.startsWith("'") ? word.slice(1, -1) : word)).slice(1);
}

describe('operation variables on a real server (C5)', () => {
  let sim: Simulator;
  let worker: DocumentWorker;
  let client: AsyncJobClient;
  let contractFile: string;
  let dir: string;
  const id = uniqueId('variables').toLowerCase();

  /** Runs `asyncjob` in this process against the worker's client, with `env` (none by default) as its environment. */
  const cli = (argv: string[], env: Record<string, string> = {}) => runOn(client, argv, env);

  /** A start of this file's provider with a unique operation ID. */
  function request(operationId: string, variables: Record<string, string>): StartRequest {
    return {
      operationId,
      provider: PROVIDER,
      payload: { report: 'sales' },
      variables,
      startedBy: 'service:test-suite',
      authorisedBy: 'policy:integration-tests',
      createDeadline: { afterMs: 30_000 },
      resultDeadline: { afterMs: 90_000 },
      policy: { baseDelayMs: 20, maxDelayMs: 200, maxHintMs: 60_000 },
    };
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-variables-'));
    sim = await startSimulator({ dialect: 'rest', token: TOKEN, seed: 11 });
    contractFile = await versionedContract(dir);
    worker = await startDocumentWorker({
      taskQueue: `wf-${id}`,
      dataDir: dir,
      providers: [{ path: contractFile }],
      baseUrls: { [PROVIDER]: sim.url },
      env: { ASYNCJOB_SIMULATOR_TOKEN: TOKEN, ASYNCJOB_SIMULATOR_URL: sim.url },
      forbiddenValues: [TOKEN],
    });
    client = worker.client;
  });

  afterAll(async () => {
    await worker?.stop();
    await sim?.stop();
  });

  it('C5: the documented start builds its create path from the variable; the record and status show the variables with the default applied', async () => {
    const text = docCommand(
      'docs/cli.md',
      `asyncjob start --provider reports --operation-id op-44 --payload '{"report":"sales"}' --var version=v1 --started-by service:billing --authorised-by alice --create-deadline 5m --result-deadline 1h`,
    ).text;
    const operationId = 'op-44';
    const started = await cli(argvOf(text));
    expect(started.stderr).toBe('');
    expect(started.code).toBe(EXIT.ok);
    const summary = await client.result(operationId);
    expect(summary.localState).toBe('succeeded');

    const creates = sim.requests({ action: 'create' }).filter((r) => r.path === '/v1/jobs');
    expect(creates).toHaveLength(1);
    const record = await client.get(operationId);
    expect(record.variables).toEqual({ version: 'v1', region: 'eu-west-1' });
    expect(record.requestFingerprint).toBe(startFingerprint({ report: 'sales' }, { version: 'v1' }));
    const stored = await worker.store.getOperation(operationId);
    expect(stored?.record.variables).toEqual({ version: 'v1', region: 'eu-west-1' });

    const status = await cli(['status', operationId]);
    expect(status.stdout).toContain('  variables: region="eu-west-1", version="v1"\n');
    const json = await cli(['status', operationId, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      operation: { localState: 'succeeded', variables: { version: 'v1', region: 'eu-west-1' }, refusal: null },
    });
  });

  it('C5: a value the adapter refuses ends the operation failed before any provider call, journalled and shown by status', async () => {
    const operationId = uniqueId('op-refused');
    const before = sim.requests().length;
    await client.start(request(operationId, { version: 'v1/admin' }));
    const summary = await client.result(operationId);
    expect(summary.localState).toBe('failed');
    expect(summary.refusal).toEqual({
      code: 'ASYNCJOB_ERR_INVALID_VARIABLE',
      issues: [
        { path: 'variables.version', message: 'does not match the pattern v[0-9]+' },
        { path: 'variables.version', message: "contains '/', which only a variable declared reserved: true may hold" },
      ],
    });
    // Nothing reached the provider: no request at all since the start, none carrying this operation's token.
    expect(sim.requests().slice(before)).toEqual([]);
    const record = await client.get(operationId);
    expect(record.used.createAttempts).toBe(0);
    const journal = (await worker.store.entries(operationId)).map(({ entry }) => entry.body);
    expect(journal.map((b) => b.kind)).toEqual(['intent', 'transition', 'transition']);
    expect(journal.at(-1)).toMatchObject({
      kind: 'transition',
      from: 'create_pending',
      to: 'failed',
      cause: 'variables_refused',
      reason: expect.stringContaining('ASYNCJOB_ERR_INVALID_VARIABLE: variables.version'),
    });
    // The refusal leaves a store the audit verifies, held to Temporal's history too.
    const audited = await auditVerifyWithTemporal(operationId, path.join(dir, 'asyncjob.db'), `wf-${id}`);
    expect(audited.code, audited.output).toBe(0);
    const status = await cli(['status', operationId]);
    expect(status.code).toBe(EXIT.operationEndedBadly);
    expect(status.stdout).toContain('  refused:   ASYNCJOB_ERR_INVALID_VARIABLE: variables.version: does not match');
  });

  it('C5: a command line that can read the document refuses a misfit at once, exit 2 naming the variables, nothing started', async () => {
    const text = docCommand(
      'docs/cli.md',
      'asyncjob start --provider reports --operation-id op-45 ... --var versoin=v1',
    ).text;
    const operationId = 'op-45';
    const argv = argvOf(substitute(text, [['...', ELIDED_45, 'elided']]));
    const refused = await cli(argv, { ASYNCJOB_PROVIDERS: contractFile });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toBe(
      'asyncjob: invalid operation variables: variables.versoin: not declared: the adapter declares region, version; variables.version: required by the adapter and not given\n',
    );
    await expect(client.describeOperation(operationId)).rejects.toMatchObject({ code: 'ASYNCJOB_ERR_NOT_FOUND' });
  });

  it('I2, C5: the same variables join; other variables are refused naming each one, and nothing changes', async () => {
    const operationId = uniqueId('op-join');
    const first = await client.start(request(operationId, { version: 'v1' }));
    const again = await client.start(request(operationId, { version: 'v1' }));
    expect(again).toMatchObject({ joined: true, runId: first.runId });
    const err = await client.start(request(operationId, { version: 'v2' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JoinMismatchError);
    expect((err as JoinMismatchError).differences).toEqual([
      { field: 'variables.version', existing: 'v1', given: 'v2' },
    ]);
    const payload = await client
      .start({ ...request(operationId, { version: 'v1' }), payload: { report: 'other' } })
      .catch((e: unknown) => e);
    expect(payload).toMatchObject({ code: 'ASYNCJOB_ERR_FINGERPRINT_MISMATCH' });
    expect((await client.result(operationId)).localState).toBe('succeeded');
  });
});
