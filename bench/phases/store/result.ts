/** Figure 6's result, as `results.json` holds it under `store`. */

/** One engine's figures. */
export interface StoreEngineResult {
  engine: 'sqlite' | 'postgresql';
  /** What was stored before the first timed step (bulk SQL, not timed as steps). */
  fill: {
    journalEntries: number;
    operations: number;
    entriesPerOperation: number;
    /** How the rows were written. */
    how: string;
    /** How long the bulk fill took (rows generated with real HMAC hashes, and written). */
    seconds: number;
  };
  /** What one timed step writes: a "still running" status read's entries and the snapshot, HMAC-signed. */
  step: { entries: number; kinds: string[]; entryBytes: number; snapshotBytes: number; hmacKeyed: boolean };
  /** Steps timed one at a time (after `warmUpSteps` untimed ones). */
  timedSteps: number;
  warmUpSteps: number;
  /** One step's store writes (chain-head read + commit transaction), one at a time, ms. */
  stepP50Ms: number;
  stepP90Ms: number;
  stepP99Ms: number;
  stepMaxMs: number;
  /** The two parts of a step, one at a time, ms: the idempotency check's head read, the commit transaction. */
  headReadP50Ms: number;
  commitP50Ms: number;
  commitP99Ms: number;
  /**
   * SQLite: the timed steps whose commit ran the automatic WAL checkpoint (their median), and the p99 and max of
   * all the others: what bounds the p99.
   */
  walCheckpoints?: { steps: number; stepP50Ms: number; otherStepsP99Ms: number; otherStepsMaxMs: number };
  /** Steps per second, one at a time. */
  sequentialStepsPerSecond: number;
  /** Steps per second with `concurrentOperations` operations stepping side by side, and a step's p99 then. */
  concurrentOperations: number;
  concurrentSteps: number;
  concurrentStepsPerSecond: number;
  concurrentStepP99Ms: number;
  /** Database size after the run, bytes (SQLite: the file, WAL folded in at close; PostgreSQL: tables, indexes). */
  databaseBytes: number;
  /** The engine's durability and cache settings as measured (they bound the commit). */
  settings: Record<string, string | number>;
  /** Chains of timed operations verified afterwards, from entry 1 (filled) through the timed steps. */
  chainsVerified: number;
}

/** SQLite's figure, held to the target. */
export interface SqliteStoreResult extends StoreEngineResult {
  engine: 'sqlite';
  targetP99Ms: number;
  /** `stepP99Ms <= targetP99Ms`, computed here. */
  met: boolean;
}

/** Figure 6. */
export interface StoreResult {
  sqlite: SqliteStoreResult;
  postgresql: StoreEngineResult | { skipped: string };
}
