/** Reading the worker process's memory for figure 3, and saying it in a log line. */
import type { Deployment } from '../../lib/context';
import { round } from '../../lib/stats';
import type { WorkerMemory } from '../../lib/worker-process';
import type { WorkerMemoryPair } from './result';

/** Used heap of the SDK's workflow threads (where cached workflows live), MiB. */
function workflowHeapUsedMiB(m: WorkerMemory): number {
  return m.workflowThreads.reduce((sum, t) => sum + t.usedMiB, 0);
}

/** The worker's memory as is, then after a forced GC of every isolate. */
export async function memoryPair(dep: Deployment): Promise<WorkerMemoryPair> {
  const asIs = await dep.worker.memory();
  return { asIs, afterGc: await dep.worker.memory({ gc: true }) };
}

/** One memory report as a log line. */
export function describeMemory(label: string, m: WorkerMemory): string {
  const wf = m.workflowThreads.map((t) => `${round(t.usedMiB, 0)}/${round(t.totalMiB, 0)}`).join(', ');
  return (
    `  ${label}: RSS ${round(m.rssMiB, 0)} MiB; main heap used/total ${round(m.heapUsedMiB, 0)}/${round(m.heapTotalMiB, 0)}, ` +
    `external ${round(m.externalMiB, 0)}; workflow thread heap used/total ${wf || 'n/a'} MiB; ` +
    `cached workflows ${m.workflowWorker.numCachedWorkflows}/${m.workflowWorker.maxCachedWorkflows}`
  );
}

/** Live workflow heap per cached workflow between two reports after GC, KiB; null with an empty cache. */
export function liveHeapPerCachedKiB(idle: WorkerMemory, loaded: WorkerMemory): number | null {
  const cached = loaded.workflowWorker.numCachedWorkflows;
  if (cached === 0) return null;
  return Math.round(((workflowHeapUsedMiB(loaded) - workflowHeapUsedMiB(idle)) / cached) * 1024);
}
