/**
 * The one contract every OperationStore engine must pass. Each engine's test file calls
 * `operationStoreContract(name, factory)`; the factory gives a fresh, migrated, isolated database per test and
 * raw SQL access behind the store's back (for tamper tests, as an attacker with database access would have).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chainKeyId, entryHash, GENESIS_HASH } from '../../src/adapters/store/chain';
import { type OperationStore, type OperationStoreOptions } from '../../src/adapters/store/operation-store';
import { type ErrorCode } from '../../src/core/codes';
import { hasCode } from '../../src/core/errors';
import { type JournalEntry } from '../../src/core/journal';
import { snapshot, storyEntries } from './fixtures';

/** A fresh isolated database with raw access. */
export interface StoreHarness {
  /** A migrated store on the database, opened with no options. */
  readonly store: OperationStore;
  /** Opens (and migrates) another store on the same database, e.g. with an HMAC key. */
  open(options?: OperationStoreOptions): Promise<OperationStore>;
  /** Runs SQL directly, bypassing the store (portable SQL only: both engines run the same text). */
  sql(statement: string): Promise<void>;
  /** Drops the append-only triggers, as an attacker with database access would before editing history. */
  dropAppendOnlyTriggers(): Promise<void>;
  /** Closes everything and removes the database. */
  cleanup(): Promise<void>;
}

/** Creates a harness on a fresh database. */
export type HarnessFactory = () => Promise<StoreHarness>;

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(hasCode(err, code), `expected ${code}, got ${String(err)}`).toBe(true);
  return err as Error;
}

/** Registers the contract suite for one engine. */
export function operationStoreContract(engine: string, factory: HarnessFactory): void {
  describe(`OperationStore contract: ${engine}`, () => {
    let h: StoreHarness;
    let store: OperationStore;
    beforeEach(async () => {
      h = await factory();
      store = h.store;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    describe('migrations', () => {
      it('C1: migrate is idempotent and safe when two stores start at once on one database', async () => {
        const [a, b] = await Promise.all([h.open(), h.open()]);
        await Promise.all([a.migrate(), b.migrate(), store.migrate()]);
        await a.append(storyEntries('op-m')[0]!);
        expect(await b.chainHead('op-m')).toMatchObject({ lastSequence: 1 });
        await Promise.all([a.close(), b.close()]);
      });
    });

    describe('append', () => {
      it('M3: appends entries in one chain per operation, linked from the genesis hash', async () => {
        const entries = storyEntries('op-1');
        const results = await store.appendMany(entries);
        expect(results.map((r) => r.kind)).toEqual(entries.map(() => 'appended'));
        const stored = await store.entries('op-1');
        expect(stored.map((s) => s.entry)).toEqual(entries);
        expect(stored[0]!.prevHash).toBe(GENESIS_HASH);
        for (let i = 1; i < stored.length; i++) expect(stored[i]!.prevHash).toBe(stored[i - 1]!.hash);
        expect(stored[2]!.hash).toBe(entryHash(entries[2]!, stored[1]!.hash));
        expect(await store.chainHead('op-1')).toEqual({ lastSequence: 7, lastHash: stored[6]!.hash });
        expect((await store.entries('op-1', { fromSequence: 6 })).map((s) => s.entry.sequence)).toEqual([6, 7]);
      });

      it('M3: appending the same entry twice is a no-op that returns the same hash', async () => {
        const [first, second] = storyEntries('op-1');
        const a = await store.append(first!);
        await store.append(second!);
        const again = await store.append(structuredClone(first!));
        expect(again).toEqual({ kind: 'duplicate', hash: a.hash });
        expect(await store.entries('op-1')).toHaveLength(2);
      });

      it('M3: a different entry under an existing (operation, sequence) is a reported conflict, never an overwrite', async () => {
        const [first] = storyEntries('op-1');
        await store.append(first!);
        const changed: JournalEntry = { ...first!, actor: 'someone-else' };
        const err = await expectCode(store.append(changed), 'ASYNCJOB_ERR_JOURNAL_CONFLICT');
        expect(err.message).toContain('op-1');
        expect((await store.entries('op-1'))[0]!.entry.actor).toBe('workflow');
      });

      it('M3: a sequence beyond the next one is refused as a gap', async () => {
        const entries = storyEntries('op-1');
        await store.append(entries[0]!);
        await expectCode(store.append(entries[2]!), 'ASYNCJOB_ERR_JOURNAL_GAP');
        await expectCode(store.append(storyEntries('op-new')[1]!), 'ASYNCJOB_ERR_JOURNAL_GAP');
        expect(await store.chainHead('op-1')).toMatchObject({ lastSequence: 1 });
        expect(await store.chainHead('op-new')).toEqual({ lastSequence: 0, lastHash: null });
      });

      it('appendMany is all or none', async () => {
        const entries = storyEntries('op-1');
        await expectCode(store.appendMany([entries[0]!, entries[1]!, entries[3]!]), 'ASYNCJOB_ERR_JOURNAL_GAP');
        expect(await store.entries('op-1')).toEqual([]);
      });

      it("F2: appendWithSnapshot stores a step's entries and its snapshot together, or neither", async () => {
        const entries = storyEntries('op-1');
        await expectCode(
          store.appendWithSnapshot([entries[0]!, entries[2]!], snapshot('op-1', { version: 3 })),
          'ASYNCJOB_ERR_JOURNAL_GAP',
        );
        expect(await store.entries('op-1')).toEqual([]);
        expect(await store.getOperation('op-1')).toBeNull();
        const both = await store.appendWithSnapshot([entries[0]!, entries[1]!], snapshot('op-1', { version: 2 }));
        expect(both.appended).toHaveLength(2);
        expect(both.snapshot).toEqual({ kind: 'written', version: 2 });
        expect((await store.chainHead('op-1')).lastSequence).toBe(2);
        expect((await store.getOperation('op-1'))?.version).toBe(2);
      });

      it('refuses an invalid entry with a typed error naming every bad field', async () => {
        const bad = storyEntries('op-1')[0]!;
        const err = (await expectCode(
          store.append({ ...bad, at: 'yesterday', body: { ...bad.body, provider: '' } } as JournalEntry),
          'ASYNCJOB_ERR_INVALID_INPUT',
        )) as Error & { issues: { path: string }[] };
        expect(err.issues.map((i) => i.path).sort()).toEqual(['at', 'body.provider']);
      });
    });

    describe('secrets (T4)', () => {
      const withHeaders = (headers: Record<string, string>): JournalEntry => {
        const e = storyEntries('op-s')[1]!;
        return { ...e, sequence: 1, body: { ...e.body, headers } as JournalEntry['body'] };
      };

      it('T4: refuses an Authorization header value or a bearer token, naming where, never echoing it', async () => {
        const e1 = await expectCode(
          store.append(withHeaders({ Authorization: 'Basic dXNlcjpwYXNz' })),
          'ASYNCJOB_ERR_SECRET_IN_RECORD',
        );
        expect(e1.message).toContain('$.body.headers.Authorization');
        expect(e1.message).not.toContain('dXNlcjpwYXNz');
        const e2 = await expectCode(
          store.append(withHeaders({ 'x-debug': 'sent Bearer eyJhbGciOi.abc.def' })),
          'ASYNCJOB_ERR_SECRET_IN_RECORD',
        );
        expect(e2.message).not.toContain('eyJhbGciOi');
        expect(await store.entries('op-s')).toEqual([]);
      });

      it('T4: accepts a redacted Authorization header and a WWW-Authenticate challenge', async () => {
        expect(
          (
            await store.append(
              withHeaders({
                authorization: '[redacted]',
                'www-authenticate': 'Bearer realm="api", error="invalid_token"',
              }),
            )
          ).kind,
        ).toBe('appended');
      });

      it('T4: refuses configured secret values anywhere in entries, snapshots and webhook events', async () => {
        const guarded = await h.open({ forbiddenValues: ['tk_fake_51Habc'] });
        const e = storyEntries('op-s')[1]!;
        const leaking = { ...e, sequence: 1, body: { ...e.body, note: 'key tk_fake_51Habc used' } } as JournalEntry;
        await expectCode(guarded.append(leaking), 'ASYNCJOB_ERR_SECRET_IN_RECORD');
        await expectCode(
          guarded.putOperation(snapshot('op-s', { record: { token: 'tk_fake_51Habc' } })),
          'ASYNCJOB_ERR_SECRET_IN_RECORD',
        );
        await expectCode(
          guarded.recordWebhookEvent({
            provider: 'acme',
            eventId: 'tk_fake_51Habc',
            receivedAt: '2026-11-29T10:00:00.000Z',
          }),
          'ASYNCJOB_ERR_SECRET_IN_RECORD',
        );
        expect((await store.append(leaking)).kind).toBe('appended');
        await guarded.close();
      });
    });

    describe('current record', () => {
      it('P4: putOperation upserts the snapshot and never moves backwards', async () => {
        expect(await store.putOperation(snapshot('op-1', { version: 2, localState: 'accepted' }))).toEqual({
          kind: 'written',
          version: 2,
        });
        expect(await store.putOperation(snapshot('op-1', { version: 2, localState: 'accepted' }))).toEqual({
          kind: 'unchanged',
          version: 2,
        });
        expect(await store.putOperation(snapshot('op-1', { version: 2, localState: 'observing' }))).toEqual({
          kind: 'stale',
          storedVersion: 2,
        });
        expect(await store.putOperation(snapshot('op-1', { version: 1, localState: 'create_pending' }))).toEqual({
          kind: 'stale',
          storedVersion: 2,
        });
        expect((await store.getOperation('op-1'))?.localState).toBe('accepted');
        expect(await store.putOperation(snapshot('op-1', { version: 5, localState: 'observing' }))).toEqual({
          kind: 'written',
          version: 5,
        });
        expect(await store.getOperation('op-1')).toEqual(snapshot('op-1', { version: 5, localState: 'observing' }));
        expect(await store.getOperation('missing')).toBeNull();
      });

      it('B2: putReservation rewrites the snapshot at its own version only, and never over a newer step', async () => {
        await store.putOperation(snapshot('op-1', { version: 3, localState: 'observing' }));
        const reserved = snapshot('op-1', { version: 3, localState: 'observing', record: { reserved: 4 } });
        expect(await store.putReservation(reserved)).toBe(true);
        expect(await store.getOperation('op-1')).toEqual(reserved);
        // Another writer's step moved the operation on: a late reservation writes nothing.
        await store.putOperation(snapshot('op-1', { version: 4, localState: 'observing' }));
        expect(await store.putReservation(reserved)).toBe(false);
        expect(await store.putReservation({ ...reserved, version: 4, localState: 'cancelling' })).toBe(false);
        expect(await store.getOperation('op-1')).toEqual(snapshot('op-1', { version: 4, localState: 'observing' }));
        expect(await store.putReservation(snapshot('missing', { version: 1 }))).toBe(false);
        expect((await store.verifyChains()).breaks).toEqual([]);
      });

      it('putOperation and append on the same operation keep both the snapshot and the chain head', async () => {
        const entries = storyEntries('op-1');
        await store.append(entries[0]!);
        await store.putOperation(snapshot('op-1'));
        await store.append(entries[1]!);
        expect(await store.getOperation('op-1')).toEqual(snapshot('op-1'));
        expect((await store.chainHead('op-1')).lastSequence).toBe(2);
        expect((await store.verifyChains()).breaks).toEqual([]);
      });

      it('refuses an invalid snapshot naming the field', async () => {
        const err = (await expectCode(
          store.putOperation({ ...snapshot('op-1'), version: 0, localState: 'nearly_done' } as never),
          'ASYNCJOB_ERR_INVALID_INPUT',
        )) as Error & { issues: { path: string }[] };
        expect(err.issues.map((i) => i.path).sort()).toEqual(['localState', 'version']);
      });
    });

    describe("the webhook receiver's query", () => {
      beforeEach(async () => {
        await store.putOperation(snapshot('op-a', { localState: 'observing', remoteJobIds: ['job_a'] }));
        await store.putOperation(
          snapshot('op-d', { provider: 'other', localState: 'succeeded', remoteJobIds: ['job_a'] }),
        );
      });

      it('W1: finds the operation of a provider job ID, by snapshot or by journal entry', async () => {
        expect(await store.findByProviderJobId('acme', 'job_a')).toEqual(['op-a']);
        expect(await store.findByProviderJobId('other', 'job_a')).toEqual(['op-d']);
        expect(await store.findByProviderJobId('acme', 'job_7ad2')).toEqual([]);
        await store.appendMany(storyEntries('op-j', 'acme').slice(0, 3));
        expect(await store.findByProviderJobId('acme', 'job_7ad2')).toEqual(['op-j']);
      });
    });

    describe('webhook events and artifacts', () => {
      it('W1: a webhook event is recorded once per (provider, event ID)', async () => {
        const event = {
          provider: 'acme',
          eventId: 'evt_1',
          receivedAt: '2026-11-29T10:00:00.000Z',
          operationId: 'op-1',
        };
        expect(await store.recordWebhookEvent(event)).toBe('recorded');
        expect(await store.recordWebhookEvent({ ...event, receivedAt: '2026-11-29T10:00:05.000Z' })).toBe('duplicate');
        expect(await store.recordWebhookEvent({ ...event, provider: 'other' })).toBe('recorded');
        await expectCode(store.recordWebhookEvent({ ...event, eventId: '' }), 'ASYNCJOB_ERR_INVALID_INPUT');
      });

      it('R2: artifact entries are queryable with location, sha256, size and validation outcome', async () => {
        await store.appendMany(storyEntries('op-1'));
        expect(await store.artifacts('op-1')).toEqual([
          {
            operationId: 'op-1',
            sequence: 7,
            at: '2026-11-29T10:40:00.000Z',
            location: 'file:///var/asyncjob/op-1.json',
            sha256: 'cd'.repeat(32),
            sizeBytes: 1234,
            contentType: 'application/json',
            validation: 'valid',
          },
        ]);
      });
    });

    describe('append-only and tamper evidence (T2)', () => {
      beforeEach(async () => {
        await store.appendMany(storyEntries('op-1'));
        await store.appendMany(storyEntries('op-2'));
      });

      it('M3: the database refuses UPDATE and DELETE of the journal and artifacts (triggers)', async () => {
        for (const statement of [
          "UPDATE journal SET actor = 'mallory' WHERE operation_id = 'op-1' AND sequence = 2",
          "DELETE FROM journal WHERE operation_id = 'op-1' AND sequence = 7",
          "UPDATE artifacts SET size_bytes = 1 WHERE operation_id = 'op-1'",
          "DELETE FROM artifacts WHERE operation_id = 'op-1'",
        ]) {
          await expect(h.sql(statement), statement).rejects.toThrow(/ASYNCJOB_ERR_APPEND_ONLY/);
        }
        expect(await store.verifyChains()).toEqual({ operationsChecked: 2, entriesChecked: 14, breaks: [] });
      });

      it('T2: an edited row is named by verifyChains as a hash mismatch at its sequence', async () => {
        const before = (await store.entries('op-1'))[3]!;
        await h.dropAppendOnlyTriggers();
        await h.sql(
          `UPDATE journal SET entry = replace(entry, '"httpStatus":503', '"httpStatus":200') WHERE operation_id = 'op-1' AND sequence = 4`,
        );
        const result = await store.verifyChains();
        expect(result.breaks).toHaveLength(1);
        expect(result.breaks[0]).toMatchObject({
          operationId: 'op-1',
          sequence: 4,
          problem: 'hash_mismatch',
          found: before.hash,
        });
        expect(result.breaks[0]!.expected).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(result.breaks[0]!.expected).not.toBe(before.hash);
        expect((await store.verifyChains({ operationId: 'op-2' })).breaks).toEqual([]);
      });

      it('T2: an edited row whose hash the attacker recomputed breaks the next link', async () => {
        const stored = await store.entries('op-1');
        const forged: JournalEntry = { ...stored[3]!.entry, actor: 'mallory' };
        const forgedHash = entryHash(forged, stored[3]!.prevHash);
        await h.dropAppendOnlyTriggers();
        await h.sql(
          `UPDATE journal SET entry = replace(entry, '"actor":"worker:host-a"', '"actor":"mallory"'), hash = '${forgedHash}' WHERE operation_id = 'op-1' AND sequence = 4`,
        );
        expect((await store.verifyChains()).breaks).toEqual([
          {
            operationId: 'op-1',
            sequence: 5,
            problem: 'prev_link_mismatch',
            expected: forgedHash,
            found: stored[3]!.hash,
          },
        ]);
      });

      it('T2: a deleted row in the middle is detected as a gap', async () => {
        await h.dropAppendOnlyTriggers();
        await h.sql("DELETE FROM artifacts WHERE operation_id = 'op-2'");
        await h.sql("DELETE FROM journal WHERE operation_id = 'op-2' AND sequence = 3");
        expect((await store.verifyChains()).breaks).toEqual([
          { operationId: 'op-2', sequence: 3, problem: 'gap', expected: '3', found: '4' },
        ]);
      });

      it('T2: a deleted tail is detected against the recorded head', async () => {
        await h.dropAppendOnlyTriggers();
        await h.sql("DELETE FROM artifacts WHERE operation_id = 'op-2'");
        await h.sql("DELETE FROM journal WHERE operation_id = 'op-2' AND sequence >= 6");
        const [broken] = (await store.verifyChains()).breaks;
        expect(broken).toMatchObject({ operationId: 'op-2', sequence: 6, problem: 'missing_head' });
        expect(broken!.expected).toContain('last sequence 7');
        expect(broken!.found).toContain('last sequence 5');
      });

      it('T2: with an HMAC key kept outside the database, a fully recomputed plain chain is still detected', async () => {
        const keyed = await h.open({ hmacKey: 'audit-key-from-vault' });
        await keyed.appendMany(storyEntries('op-h'));
        expect((await keyed.verifyChains({ operationId: 'op-h' })).breaks).toEqual([]);
        const stored = await keyed.entries('op-h');
        expect(stored[0]!.hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
        // Another key (or none) cannot check the signatures: said so, naming the key, never "the entry was changed".
        const otherKey = await h.open({ hmacKey: 'a-guess' });
        const guessed = await otherKey.verifyChains({ operationId: 'op-h' });
        expect(guessed.breaks).toEqual([]);
        expect(guessed.unverifiable).toEqual([
          { operationId: 'op-h', sequence: 1, keyId: chainKeyId('audit-key-from-vault') },
        ]);
        expect((await store.verifyChains({ operationId: 'op-h' })).unverifiable).toHaveLength(1);
        // The attacker rewrites the first entry and recomputes every plain hash and the head.
        await h.dropAppendOnlyTriggers();
        let prev = GENESIS_HASH;
        for (const s of stored) {
          const entry = s.entry.sequence === 1 ? { ...s.entry, actor: 'mallory' } : s.entry;
          const hash = entryHash(entry, prev);
          const set =
            s.entry.sequence === 1 ? `entry = replace(entry, '"actor":"workflow"', '"actor":"mallory"'), ` : '';
          await h.sql(
            `UPDATE journal SET ${set}prev_hash = '${prev}', hash = '${hash}', key_id = NULL WHERE operation_id = 'op-h' AND sequence = ${s.entry.sequence}`,
          );
          prev = hash;
        }
        await h.sql(`UPDATE operations SET last_hash = '${prev}' WHERE operation_id = 'op-h'`);
        expect((await store.verifyChains({ operationId: 'op-h' })).breaks).toEqual([]);
        // The key holder sees a plain entry where a signed one belongs: the chain was rewritten without the key.
        expect((await keyed.verifyChains({ operationId: 'op-h' })).breaks[0]).toMatchObject({
          operationId: 'op-h',
          sequence: 1,
          problem: 'unsigned_entry',
        });
        await Promise.all([keyed.close(), otherKey.close()]);
      });

      it('verifyChains of an unknown operation checks nothing and reports nothing', async () => {
        expect(await store.verifyChains({ operationId: 'nope' })).toEqual({
          operationsChecked: 0,
          entriesChecked: 0,
          breaks: [],
        });
      });
    });

    describe('provider sessions (V3)', () => {
      const jar = (value: string): string =>
        JSON.stringify({ v: 1, origin: 'http://127.0.0.1:8080', cookies: [{ key: 'sid', value, path: '/' }] });

      it("V3: saves, loads and replaces an operation's session; another operation sees none", async () => {
        expect(await store.loadProviderSession('op-v3')).toBeNull();
        await store.saveProviderSession('op-v3', jar('one'));
        const first = await store.loadProviderSession('op-v3');
        expect(first?.json).toBe(jar('one'));
        expect(Number.isNaN(Date.parse(first!.updatedAt))).toBe(false);
        await store.saveProviderSession('op-v3', jar('two'));
        expect((await store.loadProviderSession('op-v3'))?.json).toBe(jar('two'));
        expect(await store.loadProviderSession('op-other')).toBeNull();
      });

      it('V3: a session is kept by the database, not by the store object: another store on the same database reads it', async () => {
        await store.saveProviderSession('op-v3', jar('kept'));
        const other = await h.open();
        expect((await other.loadProviderSession('op-v3'))?.json).toBe(jar('kept'));
        await other.close();
      });

      it('V3: a session is never part of the journal, the snapshot or the chain', async () => {
        await store.appendMany(storyEntries('op-v3'));
        await store.putOperation(snapshot('op-v3'));
        const before = {
          entries: await store.entries('op-v3'),
          snapshot: await store.getOperation('op-v3'),
          head: await store.chainHead('op-v3'),
        };
        await store.saveProviderSession('op-v3', jar('sess_e2b1c9d0'));
        expect({
          entries: await store.entries('op-v3'),
          snapshot: await store.getOperation('op-v3'),
          head: await store.chainHead('op-v3'),
        }).toEqual(before);
        expect(JSON.stringify(before)).not.toContain('sess_e2b1c9d0');
        expect((await store.verifyChains({ operationId: 'op-v3' })).breaks).toEqual([]);
      });

      it('V3: a session over 64 KiB is refused with ASYNCJOB_ERR_SESSION_TOO_LARGE and the stored one is kept', async () => {
        await store.saveProviderSession('op-v3', jar('small'));
        const big = jar('x'.repeat(64 * 1024));
        const err = await expectCode(store.saveProviderSession('op-v3', big), 'ASYNCJOB_ERR_SESSION_TOO_LARGE');
        expect(err.message).toContain('65536');
        expect(err.message).not.toContain('xxxxxxxx');
        expect((await store.loadProviderSession('op-v3'))?.json).toBe(jar('small'));
      });

      it("V3: the database itself refuses an oversized session written behind the store's back", async () => {
        await expect(
          h.sql(
            `INSERT INTO provider_sessions (operation_id, jar, updated_at) VALUES ('op-raw', '${'y'.repeat(70_000)}', 'now')`,
          ),
        ).rejects.toThrow();
        expect(await store.loadProviderSession('op-raw')).toBeNull();
      });

      it('V3: refuses text that is not JSON, a bad operation ID, and a configured secret, never echoing the session', async () => {
        await expectCode(store.saveProviderSession('op-v3', 'sid=abc'), 'ASYNCJOB_ERR_INVALID_INPUT');
        await expectCode(store.saveProviderSession('', jar('a')), 'ASYNCJOB_ERR_INVALID_INPUT');
        const guarded = await h.open({ forbiddenValues: ['tk_fake_51Habc'] });
        const err = await expectCode(
          guarded.saveProviderSession('op-v3', jar('tk_fake_51Habc')),
          'ASYNCJOB_ERR_SECRET_IN_RECORD',
        );
        expect(err.message).not.toContain('tk_fake_51Habc');
        expect(await store.loadProviderSession('op-v3')).toBeNull();
        await guarded.close();
      });
    });

    it('refuses use after close', async () => {
      const other = await h.open();
      await other.close();
      await other.close();
      await expectCode(other.append(storyEntries('op-x')[0]!), 'ASYNCJOB_ERR_STORE_CLOSED');
      await expectCode(other.saveProviderSession('op-x', '{}'), 'ASYNCJOB_ERR_STORE_CLOSED');
      await expectCode(other.loadProviderSession('op-x'), 'ASYNCJOB_ERR_STORE_CLOSED');
    });
  });
}
