/**
 * The fleet's send slots on real PostgreSQL: many workers, each with its own pool, reserving at once from one
 * provider queue's row never get two slots closer than the interval, and a slot is never before the database's
 * clock when it was handed out.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresOperationStore } from '../../src/adapters/store/postgres-store';

const url = process.env.ASYNCJOB_TEST_PG_URL;

const title = url
  ? 'provider send slots (PostgreSQL)'
  : 'provider send slots (PostgreSQL): SKIPPED because ASYNCJOB_TEST_PG_URL is unset (eval "$(bash scripts/postgres-for-tests.sh start)")';

async function withStores(count: number, run: (stores: PostgresOperationStore[]) => Promise<void>): Promise<void> {
  const schema = `asyncjob_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const stores: PostgresOperationStore[] = [];
  try {
    // One after another: the first migrates the schema, the others find it current.
    for (let i = 0; i < count; i++)
      stores.push(await openPostgresStore({ connectionString: url!, schema, maxConnections: 3 }));
    await run(stores);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    const raw = new Client({ connectionString: url });
    await raw.connect();
    await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw.end();
  }
}

describe.skipIf(!url)(title, () => {
  it('concurrent reservers from separate pools never get two slots closer than the interval', async () => {
    const intervalMs = 7.5;
    await withStores(5, async (stores) => {
      const reserved = await Promise.all(
        stores.flatMap((store) =>
          Array.from({ length: 40 }, () => store.reserveProviderSend!('asyncjob-provider-rest', intervalMs)),
        ),
      );
      const slots = reserved.map((r) => r.slotAtUs).sort((a, b) => a - b);
      expect(slots).toHaveLength(200);
      for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBeGreaterThanOrEqual(7_500);
      // The row hands out slots from the database's clock on: none before the statement that took it read it.
      for (const { slotAtUs, databaseNowUs } of reserved) expect(slotAtUs - databaseNowUs).toBeLessThan(200 * 7_500);
    });
  });

  it('a queue idle for longer than the interval gets a slot at the database clock; queues do not share a row', async () => {
    await withStores(1, async ([store]) => {
      const first = await store!.reserveProviderSend('asyncjob-provider-rest', 100);
      expect(first.slotAtUs).toBeLessThanOrEqual(first.databaseNowUs);
      const second = await store!.reserveProviderSend('asyncjob-provider-rest', 100);
      expect(second.slotAtUs - first.slotAtUs).toBe(100_000);
      expect(second.slotAtUs).toBeGreaterThan(second.databaseNowUs);
      // Another deployment's provider of the same name is another queue, paced on its own.
      const other = await store!.reserveProviderSend('other-provider-rest', 100);
      expect(other.slotAtUs).toBeLessThanOrEqual(other.databaseNowUs);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const later = await store!.reserveProviderSend('asyncjob-provider-rest', 100);
      expect(later.slotAtUs).toBeLessThanOrEqual(later.databaseNowUs);
      expect(later.slotAtUs - second.slotAtUs).toBeGreaterThanOrEqual(100_000);
    });
  });

  it('refuses an interval that is not positive', async () => {
    await withStores(1, async ([store]) => {
      await expect(store!.reserveProviderSend('asyncjob-provider-rest', 0)).rejects.toMatchObject({
        code: 'ASYNCJOB_ERR_INVALID_INPUT',
      });
    });
  });
});
