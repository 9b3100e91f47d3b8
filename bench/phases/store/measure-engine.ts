/** One engine's figure 6: fill it, time the planned steps one at a time and side by side, check what they left. */
import type { RegisteredProvider } from '../../../src/adapters/providers/registry';
import type { OperationStore } from '../../../src/adapters/store/operation-store';
import { SqliteOperationStore, type SqliteWalStatus } from '../../../src/adapters/store/sqlite-store';
import { median, nowMs, percentile, round } from '../../lib/stats';
import { SQLITE_CHECKPOINTS_HOW, type Engine } from './engines';
import type { MarkedTemplate } from './filled-rows';
import type { StoreEngineResult } from './result';
import { LANES, type Scale } from './scale';
import { splitByMark, turnsOf } from './sqlite-checkpoints';
import { describeSteps, plan, type Plan } from './steps';
import { filledOperations, type FilledOperation, type Template } from './template';
import { ms, timeSequentially, type Timing } from './timing';
import { checkStored } from './validity';

/** The operation every filled one copies, as run by the core and as rows, and the provider that read it. */
export interface Model {
  provider: RegisteredProvider;
  template: Template;
  rows: MarkedTemplate;
}

/** What the timed runs measured on an open store. */
interface Runs {
  sequential: Timing[];
  sequentialMs: number;
  concurrent: Timing[][];
  concurrentMs: number;
  chainsVerified: number;
  /** SQLite: the checkpointer's counters after the runs. */
  wal?: SqliteWalStatus;
}

/** Migrates the engine's store, then fills it with `operations` copies of the template (bulk, timed apart). */
async function fill(
  engine: Engine,
  operations: number,
  { template, rows }: Model,
  log: (line: string) => void,
): Promise<{ ops: FilledOperation[]; seconds: number }> {
  await (await engine.open()).close();
  const ops = filledOperations(operations);
  const f0 = nowMs();
  await engine.fill(rows, ops);
  const seconds = round((nowMs() - f0) / 1000, 1);
  log(
    `  ${engine.name}: filled ${operations * template.entries.length} entries (${operations} operations) in ${seconds} s`,
  );
  return { ops, seconds };
}

/** The warm-up, the steps one at a time, then the lanes side by side; then the checks of what they left. */
async function timeRuns(store: OperationStore, steps: Plan): Promise<Runs> {
  const sqlite = store instanceof SqliteOperationStore ? store : undefined;
  await timeSequentially(store, steps.warmUp);
  const s0 = nowMs();
  const sequential = await timeSequentially(store, steps.sequential, sqlite && (() => turnsOf(sqlite)));
  const sequentialMs = nowMs() - s0;
  const c0 = nowMs();
  const concurrent = await Promise.all(steps.lanes.map((lane) => timeSequentially(store, lane)));
  const concurrentMs = nowMs() - c0;
  const wal = sqlite?.walStatus();
  const chainsVerified = await checkStored(store, [...steps.sequential, ...steps.lanes.flat()]);
  return { sequential, sequentialMs, concurrent, concurrentMs, chainsVerified, ...(wal ? { wal } : {}) };
}

/**
 * The comparison run (SQLite): the comparison steps one at a time on a store whose commits checkpoint (SQLite's
 * automatic checkpoint), its warm-up untimed; the WAL header's checkpoint number read after each step.
 */
async function compareInCommitCheckpoints(
  engine: Engine,
  steps: Plan,
  warmUpSteps: number,
): Promise<StoreEngineResult['inCommitCheckpoints']> {
  if (!engine.openInCommitCheckpoints || !engine.walEpoch || steps.comparison.length === 0) return undefined;
  const store = await engine.openInCommitCheckpoints();
  try {
    await timeSequentially(store, steps.comparison.slice(0, warmUpSteps));
    const timed = await timeSequentially(store, steps.comparison.slice(warmUpSteps), engine.walEpoch);
    await checkStored(store, steps.comparison);
    const stepMs = timed.map((t) => t.stepMs);
    return {
      timedSteps: timed.length,
      stepP50Ms: ms(median(stepMs)),
      stepP99Ms: ms(percentile(stepMs, 99)),
      stepMaxMs: ms(Math.max(...stepMs)),
      checkpointingSteps: splitByMark(timed, 'previous')!,
    };
  } finally {
    await store.close();
  }
}

/** The step-time figures of the result, from the timed runs. */
function stepFigures(steps: Plan, runs: Runs) {
  const { sequential, sequentialMs, concurrent, concurrentMs, wal } = runs;
  const stepMs = sequential.map((t) => t.stepMs);
  const commitMs = sequential.map((t) => t.commitMs);
  const first = sequential.filter((t) => !t.inLoop);
  const inLoop = sequential.filter((t) => t.inLoop);
  const concurrentSteps = concurrent.flat();
  const timed = steps.sequential;
  return {
    step: describeSteps(timed),
    timedSteps: timed.length,
    warmUpSteps: steps.warmUp.length,
    stepP50Ms: ms(median(stepMs)),
    stepP90Ms: ms(percentile(stepMs, 90)),
    stepP99Ms: ms(percentile(stepMs, 99)),
    stepMaxMs: ms(Math.max(...stepMs)),
    firstReadStepP50Ms: ms(median(first.map((t) => t.stepMs))),
    firstReadStepP99Ms: ms(
      percentile(
        first.map((t) => t.stepMs),
        99,
      ),
    ),
    loopReadStepP50Ms: ms(median(inLoop.map((t) => t.stepMs))),
    loopReadStepP99Ms: ms(
      percentile(
        inLoop.map((t) => t.stepMs),
        99,
      ),
    ),
    headReadP50Ms: ms(median(first.map((t) => t.beforeCommitMs))),
    reservationP50Ms: ms(median(inLoop.map((t) => t.beforeCommitMs))),
    commitP50Ms: ms(median(commitMs)),
    commitP99Ms: ms(percentile(commitMs, 99)),
    ...(wal
      ? {
          walCheckpointer: {
            ...wal,
            settings: SQLITE_CHECKPOINTS_HOW,
            stepsWithTurn: splitByMark(sequential, 'same')!,
          },
        }
      : {}),
    sequentialStepsPerSecond: Math.round((timed.length / sequentialMs) * 1000),
    concurrentOperations: LANES,
    concurrentSteps: concurrentSteps.length,
    concurrentStepsPerSecond: Math.round((concurrentSteps.length / concurrentMs) * 1000),
    concurrentStepP99Ms: ms(
      percentile(
        concurrentSteps.map((t) => t.stepMs),
        99,
      ),
    ),
  };
}

/** Measures one engine at `scale`. */
export async function measureEngine(
  engine: Engine,
  scale: Scale,
  model: Model,
  log: (line: string) => void,
): Promise<StoreEngineResult> {
  const entriesPerOperation = model.template.entries.length;
  const operations = Math.round(scale.journalEntries / entriesPerOperation);
  const filled = await fill(engine, operations, model, log);
  const steps = plan(model.provider, model.template, filled.ops, scale, engine.openInCommitCheckpoints !== undefined);
  const store = await engine.open();
  let runs: Runs;
  try {
    runs = await timeRuns(store, steps);
  } finally {
    await store.close();
  }
  const inCommitCheckpoints = await compareInCommitCheckpoints(engine, steps, scale.warmUpSteps);
  return {
    engine: engine.name,
    fill: {
      journalEntries: operations * entriesPerOperation,
      operations,
      entriesPerOperation,
      how: engine.fillHow,
      seconds: filled.seconds,
    },
    ...stepFigures(steps, runs),
    ...(inCommitCheckpoints ? { inCommitCheckpoints } : {}),
    databaseBytes: await engine.sizeBytes(),
    settings: await engine.settings(),
    chainsVerified: runs.chainsVerified,
  };
}
