/**
 * T4 and T2 on a real run: operations (success, cancel, a refused credential, an escalation) driven by a worker
 * PROCESS, with providers on every credential scheme (bearer; basic, query API key, OAuth2 client credentials and
 * AWS SigV4 through checking gateways, `auth-gateways.ts`), then every scheme's distinctive secrets are searched
 * for in the workflow histories, the worker's logs, the store file's bytes and the audit output; and store rows
 * edited or deleted behind the product's back are found by `asyncjob audit verify`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLITE_DIALECT } from '../../../src/adapters/store/sql-dialect';
import { runAuditCommand } from '../../../src/audit/cli';
import { AsyncJobInputError, OperationNotFoundError } from '../../../src/client';
import { startAuthProviders, type AuthProviders } from './auth-gateways';
import {
  DIALECTS,
  SIM_TOKEN,
  startFaultWorld,
  writeContract,
  type FaultWorld,
  type WorkerProcess,
} from './fault-harness';
import { eventsOfEveryRun } from '../../setup/temporal';

const twoPolls = [{ state: 'running', polls: 2 }, { state: 'succeeded' }];
const scripts = {
  plain: { steps: twoPolls, result: { kind: 'json', body: { rows: 2 } } },
  cancel: { steps: [{ state: 'running' }], cancel: { afterMs: 50, outcome: 'cancelled' } },
  denied: {
    steps: [{ state: 'running' }],
    faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 401 } }],
  },
  review: { steps: [{ state: 'running', polls: 1 }, { state: 'manual_review' }] },
  slow: { steps: [{ state: 'running', polls: 4 }, { state: 'succeeded' }] },
};

/** JSON with every byte array decoded as UTF-8, so payloads are searched as the text they carry. */
function searchableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    if (
      v !== null &&
      typeof v === 'object' &&
      (v as { type?: unknown }).type === 'Buffer' &&
      Array.isArray((v as { data?: unknown }).data)
    ) {
      return Buffer.from((v as { data: number[] }).data).toString('utf8');
    }
    return v;
  });
}

async function audit(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runAuditCommand(argv, { stdout: (t) => (out += t), stderr: (t) => (out += t), env: {} });
  return { code, out };
}

describe('T4, T2: no secret anywhere, tampering found', () => {
  let world: FaultWorld;
  let worker: WorkerProcess;
  let auth: AuthProviders;
  const operationIds: string[] = [];
  /** The operation on the OAuth2 provider, whose first status read is refused (401) and resent with a new token. */
  let oauth2Operation = '';
  /** Every scheme's distinctive secrets (the access tokens issued included, known only once the run is over). */
  const secrets = (): string[] => [SIM_TOKEN, ...auth.secrets()];

  beforeAll(async () => {
    world = await startFaultWorld('security', {
      scenarios: Object.fromEntries(DIALECTS.map((d) => [d, { scripts }])) as never,
    });
    auth = await startAuthProviders(world.sims.rest.url, SIM_TOKEN, (scheme) =>
      world
        .provider('rest')
        .replace(/^rest-/, `${scheme}-`)
        .slice(0, 60),
    );
    const contracts = [
      ...DIALECTS.map((d) => path.join(world.dataDir, `${world.provider(d)}.json`)),
      ...auth.gateways.map((g) =>
        writeContract(world.dataDir, 'rest', g.provider, g.url, { credential: auth.credentials[g.provider] }),
      ),
    ];
    worker = world.spawnWorker({ ASYNCJOB_LOG_LEVEL: 'debug', ASYNCJOB_PROVIDERS: contracts.join(','), ...auth.env });
    await worker.ready;
    await world.client.waitForWorkers(auth.gateways.map((g) => g.provider));
    const policy = { baseDelayMs: 20, maxDelayMs: 100, notFoundWindowMs: 2_000, decisionDeadlineMs: 300 };
    const requests = [
      ...DIALECTS.map((d) => world.request(d, { script: 'plain', policy })),
      world.request('rest', { script: 'denied', policy }),
      world.request('lro', { script: 'review', policy }),
      ...auth.gateways.map((g) => ({ ...world.request('rest', { script: 'plain', policy }), provider: g.provider })),
    ];
    oauth2Operation = requests.find((r) => r.provider.startsWith('oauth2-'))!.operationId;
    await Promise.all(requests.map((r) => world.client.start(r)));
    const cancel = world.request('operation-location', { script: 'cancel', policy });
    await world.client.start(cancel);
    await world.waitForState(cancel.operationId, ['accepted', 'observing']);
    await world.client.cancel(cancel.operationId, { requestedBy: 'alice@example.com', reason: 'T4 run' });
    requests.push(cancel);
    const summaries = await Promise.all(requests.map((r) => world.client.result(r.operationId)));
    expect(summaries.map((s) => s.localState)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'escalated',
      'escalated',
      ...auth.gateways.map(() => 'succeeded'),
      'cancelled',
    ]);
    operationIds.push(...requests.map((r) => r.operationId));
  });
  afterAll(async () => {
    await world?.stop();
    await auth?.close();
  });

  it('T4: no secret of any scheme is in any workflow history (fetched and decoded)', async () => {
    for (const operationId of operationIds) {
      // Every run: a secret carried across a continue-as-new would be in the later run's input.
      const text = searchableJson(await eventsOfEveryRun(world.temporal, operationId));
      expect(text).toContain(operationId);
      for (const secret of secrets()) expect(text).not.toContain(secret);
    }
  });

  it('T4: no secret of any scheme is in the worker process logs at debug level', () => {
    expect(worker.logs()).toContain('asyncjob worker');
    for (const secret of secrets()) expect(worker.logs()).not.toContain(secret);
  });

  it('T4: no secret of any scheme is in the bytes of the store files (database and write-ahead log)', () => {
    const files = readdirSync(path.dirname(world.storeFile)).filter((f) =>
      f.startsWith(path.basename(world.storeFile)),
    );
    expect(files.length).toBeGreaterThan(0);
    let all = Buffer.alloc(0);
    for (const f of files) all = Buffer.concat([all, readFileSync(path.join(path.dirname(world.storeFile), f))]);
    expect(all.includes(Buffer.from(operationIds[0]!))).toBe(true);
    for (const secret of secrets()) expect(all.includes(Buffer.from(secret)), secret.slice(0, 8)).toBe(false);
  });

  it('T4: no secret of any scheme is in `audit show` output, text or JSON', async () => {
    for (const operationId of operationIds) {
      for (const json of [false, true]) {
        const { code, out } = await audit([
          'show',
          operationId,
          '--store',
          `sqlite:${world.storeFile}`,
          ...(json ? ['--json'] : []),
        ]);
        expect(code).toBe(0);
        expect(out).toContain(operationId);
        for (const secret of secrets()) expect(out).not.toContain(secret);
      }
    }
  });

  it('T4: each scheme reached its provider with a good credential; the refused OAuth2 token was renewed and the read resent once, on the record', async () => {
    for (const gateway of auth.gateways) {
      expect(gateway.verdicts.length, gateway.provider).toBeGreaterThan(2);
      const refused = gateway.verdicts.filter((v) => v === 'refused').length;
      expect(refused, gateway.provider).toBe(gateway.provider.startsWith('oauth2-') ? 1 : 0);
    }
    expect(auth.revokedTokens.size).toBe(1);
    const renewed = (await world.store.entries(oauth2Operation))
      .map((e) => e.entry.body)
      .filter((b) => b.kind === 'observation' && b.credentialRenewed !== undefined);
    expect(renewed).toEqual([expect.objectContaining({ action: 'status', credentialRenewed: { httpStatus: 401 } })]);
    const { out } = await audit(['show', oauth2Operation, '--store', `sqlite:${world.storeFile}`]);
    expect(out).toContain('resent once after a 401 with a renewed credential');
  });

  it('T4: every provider request carried the credential to its own origin only, and never a wrong one', () => {
    for (const d of DIALECTS) {
      const provider = world.sims[d].requests().filter((r) => r.action !== 'sim');
      expect(provider.length).toBeGreaterThan(0);
      expect(provider.every((r) => r.authorization === 'valid')).toBe(true);
    }
  });

  it('a refused start (a bad field) leaves no workflow, no store entry and no provider request', async () => {
    const request = world.request('rest', { script: 'plain', policy: { baseDelayMs: 0 } });
    const createsBefore = world.sims.rest.requests({ action: 'create' }).length;
    await expect(world.client.start(request)).rejects.toBeInstanceOf(AsyncJobInputError);
    await expect(world.client.describeOperation(request.operationId)).rejects.toBeInstanceOf(OperationNotFoundError);
    expect(await world.store.getOperation(request.operationId)).toBeNull();
    expect(await world.store.entries(request.operationId)).toEqual([]);
    expect(world.sims.rest.requests({ action: 'create' })).toHaveLength(createsBefore);
  });

  /** Starts a slow operation and waits until it polls, for messages sent straight to its workflow. */
  async function runningOperation(): Promise<string> {
    const request = world.request('rest', {
      script: 'slow',
      policy: { baseDelayMs: 400, maxDelayMs: 400, minJitterRatio: 1, notFoundWindowMs: 2_000 },
    });
    await world.client.start(request);
    await world.waitForState(request.operationId, ['accepted', 'observing']);
    return request.operationId;
  }

  async function workflowTaskFailures(operationId: string): Promise<number> {
    const history = await world.temporal.workflow.getHandle(operationId).fetchHistory();
    return (history.events ?? []).filter(
      (e) => String(e.eventType) === 'EVENT_TYPE_WORKFLOW_TASK_FAILED' || e.eventType === 9,
    ).length;
  }

  it('malformed signals and updates sent straight to the workflow (past the client) are refused; only the decision is recorded (A2); the operation ends normally', async () => {
    const operationId = await runningOperation();
    const handle = world.temporal.workflow.getHandle(operationId);
    const before = (await world.store.entries(operationId)).length;
    await handle.signal('webhook', { eventId: 42 });
    await handle.signal('webhook', 'not an object');
    await handle.signal('cancel', { requestedBy: '', reason: 42 });
    // The validator refuses with an ApplicationFailure typed by our code; the message leads with it too.
    const refusal = (p: Promise<unknown>): Promise<string> =>
      p.then(
        () => 'accepted',
        (e: { cause?: { type?: string; message?: string } }) => `${e.cause?.type} | ${e.cause?.message}`,
      );
    expect(await refusal(handle.executeUpdate('cancelOperation', { args: [{ reason: 42 }] }))).toMatch(
      /^ASYNCJOB_ERR_INVALID_INPUT \| ASYNCJOB_ERR_INVALID_INPUT: requestedBy/,
    );
    expect(await refusal(handle.executeUpdate('decideOperation', { args: [{}] }))).toMatch(
      /^ASYNCJOB_ERR_DECISION_INCOMPLETE \| ASYNCJOB_ERR_DECISION_INCOMPLETE: option/,
    );
    const summary = await world.client.result(operationId);
    expect(summary.localState).toBe('succeeded');
    const states = await world.transitions(operationId);
    expect(states).not.toContain('cancel_requested');
    const bodies = (await world.store.entries(operationId)).map((e) => e.entry.body);
    expect(bodies.length).toBeGreaterThan(before);
    expect(bodies.filter((b) => b.kind === 'observation' && b.action === 'webhook')).toEqual([]);
    // A2: the refused decision is recorded, with placeholders and its code, by the update's route.
    expect(bodies.filter((b) => b.kind === 'decision')).toEqual([
      expect.objectContaining({
        decision: '(none)',
        approvedBy: '(unknown)',
        accepted: false,
        route: 'api',
        rejectionReason: expect.stringMatching(/^ASYNCJOB_ERR_DECISION_INCOMPLETE/) as unknown,
      }),
    ]);
    expect(await workflowTaskFailures(operationId)).toBe(0);
  });

  it('A2: a malformed decide signal sent straight to the workflow is recorded only as a refused decision (placeholders, the refusal code); the operation ends normally', async () => {
    const operationId = await runningOperation();
    await world.temporal.workflow
      .getHandle(operationId)
      .signal('decide', { option: 42, approvedBy: '', extendMs: 'soon' });
    const summary = await world.client.result(operationId);
    expect(summary.localState).toBe('succeeded');
    expect(await workflowTaskFailures(operationId)).toBe(0);
    const decisions = (await world.store.entries(operationId))
      .map((e) => e.entry.body)
      .filter((b) => b.kind === 'decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      kind: 'decision',
      decision: '(none)',
      approvedBy: '(unknown)',
      accepted: false,
    });
    expect((decisions[0] as { rejectionReason?: string }).rejectionReason).toMatch(/^ASYNCJOB_ERR_/);
    expect(await world.transitions(operationId)).not.toContain('escalated');
  });

  describe('T2: a store edited behind the product is found by audit verify', () => {
    let copies = 0;
    /** A consistent copy of the live store (the worker still has it open). */
    function tamperableCopy(): string {
      const file = path.join(world.dataDir, `tampered-${++copies}.db`);
      const live = new Database(world.storeFile, { readonly: true });
      live.exec(`VACUUM INTO '${file}'`);
      live.close();
      return file;
    }
    /** Edits the copy with the guard triggers dropped, then puts them back (a dropped trigger is a finding itself). */
    function mutate(file: string, fn: (db: Database.Database) => void): void {
      const db = new Database(file);
      try {
        db.exec('DROP TRIGGER IF EXISTS journal_no_update; DROP TRIGGER IF EXISTS journal_no_delete;');
        fn(db);
        db.exec(SQLITE_DIALECT.appendOnly('journal'));
      } finally {
        db.close();
      }
    }

    it('T2: the untouched copy verifies clean', async () => {
      const { code, out } = await audit(['verify', '--store', `sqlite:${tamperableCopy()}`]);
      expect(out).not.toContain(SIM_TOKEN);
      expect(code).toBe(0);
    });

    it('T2: an edited journal entry (a transition rewritten) is found, naming the operation', async () => {
      const file = tamperableCopy();
      const victim = operationIds[0]!;
      mutate(file, (db) => {
        const row = db
          .prepare(
            "SELECT sequence, entry FROM journal WHERE operation_id = ? AND kind = 'transition' ORDER BY sequence DESC LIMIT 1",
          )
          .get(victim) as { sequence: number; entry: string };
        const edited = row.entry.replace('"succeeded"', '"failed"');
        expect(edited).not.toBe(row.entry);
        db.prepare('UPDATE journal SET entry = ? WHERE operation_id = ? AND sequence = ?').run(
          edited,
          victim,
          row.sequence,
        );
      });
      const { code, out } = await audit(['verify', '--store', `sqlite:${file}`]);
      expect(code).toBe(1);
      expect(out).toContain(victim);
    });

    it('T2: a deleted journal row in the middle of a chain is found', async () => {
      const file = tamperableCopy();
      const victim = operationIds[1]!;
      mutate(file, (db) => db.prepare('DELETE FROM journal WHERE operation_id = ? AND sequence = 3').run(victim));
      const { code, out } = await audit(['verify', '--store', `sqlite:${file}`, '--operation', victim]);
      expect(code).toBe(1);
      expect(out).toContain(victim);
    });

    it('T2: the last journal row of an operation deleted (a truncated chain) is found', async () => {
      const file = tamperableCopy();
      const victim = operationIds[2]!;
      mutate(file, (db) =>
        db
          .prepare(
            'DELETE FROM journal WHERE operation_id = ? AND sequence = (SELECT max(sequence) FROM journal WHERE operation_id = ?)',
          )
          .run(victim, victim),
      );
      const { code, out } = await audit(['verify', '--store', `sqlite:${file}`, '--operation', victim]);
      expect(code).toBe(1);
      expect(out).toContain(victim);
    });
  });
});
