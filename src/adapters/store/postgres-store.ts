/**
 * The PostgreSQL engine, for many workers and operators: the operation store ({@link SqlOperationStore}) on a
 * `pg` Pool ({@link PostgresDriver}), optionally bound to one schema. Appends lock the operation's head row
 * (`SELECT ... FOR UPDATE`) inside the write transaction, so concurrent writers to one operation take turns;
 * migrations run under a transaction-scoped advisory lock.
 */
import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema';
import { type SendSlotReservation } from '../../core/send-slot';
import { idSchema } from '../../core/start-request';
import { type LoopWakeNotice, type OperationStoreOptions } from './operation-store';
import { PostgresDriver, type PostgresConnectionOptions } from './postgres-driver';
import { migrated, SqlOperationStore } from './sql-store';
import { StoreError } from './store-errors';

/** The database's clock in microseconds since the epoch, read when the expression runs (not at transaction start). */
const DATABASE_NOW_US = '(extract(epoch FROM clock_timestamp()) * 1000000)::bigint';

/**
 * One statement reserves a slot: the row is created on a queue's first send (its slot is now) or locked and moved
 * (its slot is the later of now and the next free instant). The clock is read after the row is locked, so a
 * reserver that waited for the lock gets a slot no earlier than when it got the row; RETURNING reads it again,
 * as late as possible, so the wait the worker computes is never longer than the database meant.
 */
const RESERVE_SEND_SQL = `INSERT INTO provider_send_slots AS slots (task_queue, next_free_at_us)
  VALUES (?, ${DATABASE_NOW_US} + ?)
  ON CONFLICT (task_queue) DO UPDATE SET next_free_at_us = greatest(${DATABASE_NOW_US}, slots.next_free_at_us) + ?
  RETURNING next_free_at_us - ? AS slot_at_us, ${DATABASE_NOW_US} AS database_now_us`;

/** The channel of {@link PostgresOperationStore.publishLoopWake}: the database's, so notices carry their schema. */
const LOOP_WAKE_CHANNEL = 'asyncjob_loop_wake';

/** A notice as it arrives: checked, since anyone connected to the database may notify the channel. */
const loopWakeNoticeSchema = lazySchema(() =>
  z.object({ operationId: idSchema, origin: z.string().min(1).max(100), schema: z.string() }),
);

/** Options of the PostgreSQL engine. */
export interface PostgresStoreOptions extends OperationStoreOptions, PostgresConnectionOptions {}

/** The PostgreSQL {@link OperationStore}. Use {@link openPostgresStore} to open and migrate. */
export class PostgresOperationStore extends SqlOperationStore {
  private readonly postgres: PostgresDriver;

  /** Creates the pool (no connection yet); call `migrate()` before use. */
  constructor(options: PostgresStoreOptions) {
    const driver = new PostgresDriver(options);
    super(driver, options);
    this.postgres = driver;
  }

  /** @inheritdoc */
  async reserveProviderSend(taskQueue: string, intervalMs: number): Promise<SendSlotReservation> {
    if (taskQueue.length === 0 || !Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new StoreError('ASYNCJOB_ERR_INVALID_INPUT', 'a send slot needs a task queue and a positive interval', [
        { path: taskQueue.length === 0 ? 'taskQueue' : 'intervalMs', message: 'missing or not positive' },
      ]);
    }
    // Rounded up: slots are never closer than the interval asked for.
    const intervalUs = Math.ceil(intervalMs * 1000);
    const { rows } = await this.postgres.query<{ slot_at_us: string; database_now_us: string }>(RESERVE_SEND_SQL, [
      taskQueue,
      intervalUs,
      intervalUs,
      intervalUs,
    ]);
    const row = rows[0]!;
    return { slotAtUs: Number(row.slot_at_us), databaseNowUs: Number(row.database_now_us) };
  }

  /** @inheritdoc */
  async publishLoopWake(notice: LoopWakeNotice): Promise<void> {
    await this.postgres.notify(LOOP_WAKE_CHANNEL, { operationId: notice.operationId, origin: notice.origin });
  }

  /** @inheritdoc */
  listenForLoopWakes(
    listener: (notice: LoopWakeNotice) => void,
    onError: (err: Error) => void,
  ): Promise<() => Promise<void>> {
    return this.postgres.listen(
      LOOP_WAKE_CHANNEL,
      (payload, schema) => {
        const parsed = loopWakeNoticeSchema.safeParse(parseJson(payload));
        if (!parsed.success) return onError(new Error(`a loop wake notice that is not one: ${payload.slice(0, 200)}`));
        if (parsed.data.schema === schema)
          listener({ operationId: parsed.data.operationId, origin: parsed.data.origin });
      },
      onError,
    );
  }
}

/** `text` as JSON, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Opens a PostgreSQL store and applies pending migrations. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresOperationStore> {
  return migrated(new PostgresOperationStore(options));
}
