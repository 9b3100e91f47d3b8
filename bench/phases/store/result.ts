/** Figure 6's result, as `results.json` holds it under `store`. */
import type { SqliteWalStatus } from '../../../src/adapters/store/sqlite-store';

/** Timed steps split by an event some of them paid for: those steps (their median), and the others' p99 and max, ms. */
export interface StepSplit {
  steps: number;
  stepP50Ms: number | null;
  otherStepsP99Ms: number;
  otherStepsMaxMs: number;
}

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
  /**
   * What one timed step writes: a "still running" status read's entries and the snapshot, HMAC-signed (a loop
   * read: its reservation's snapshot too).
   */
  step: { entries: number; kinds: string[]; entryBytes: number; snapshotBytes: number; hmacKeyed: boolean };
  /** Steps timed one at a time (after `warmUpSteps` untimed ones). */
  timedSteps: number;
  warmUpSteps: number;
  /**
   * One step's store calls, one at a time, ms: an activity's first read (chain-head read + commit transaction)
   * or, three times in four, a read of its loop (reservation write + commit transaction).
   */
  stepP50Ms: number;
  stepP90Ms: number;
  stepP99Ms: number;
  stepMaxMs: number;
  /** The two kinds apart, ms. */
  firstReadStepP50Ms: number;
  firstReadStepP99Ms: number;
  loopReadStepP50Ms: number;
  loopReadStepP99Ms: number;
  /** A step's parts, one at a time, ms: the first read's head read, a loop read's reservation, the commit. */
  headReadP50Ms: number;
  reservationP50Ms: number;
  commitP50Ms: number;
  commitP99Ms: number;
  /**
   * SQLite: the store's WAL checkpointer after the timed runs (its counters since the store opened, warm-up and
   * both runs included), and the one-at-a-time steps that waited for one of its turns (a RESTART checkpoint between two
   * transactions, once the WAL passed its limit): their median, and the p99 and max of all the others.
   */
  walCheckpointer?: SqliteWalStatus & { settings: string; stepsWithTurn: StepSplit };
  /**
   * SQLite, for comparison: the same kind of steps, one at a time, on other filled operations, on a store opened
   * with `checkpointIntervalMs: 0`: SQLite's automatic checkpoint then runs inside the commit that takes the WAL
   * past 1,000 pages (the engine's default, which the store's own checkpointer replaces). `checkpointingSteps`: the
   * steps whose commit ran it.
   */
  inCommitCheckpoints?: {
    timedSteps: number;
    stepP50Ms: number;
    stepP99Ms: number;
    stepMaxMs: number;
    checkpointingSteps: StepSplit;
  };
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
