/** The report's sections for figures 3, 4 and 5: each figure beside its baseline, with the conditions that bound it. */
import type { FleetResult } from '../phases/fleet';
import { describeAccount } from '../phases/fleet/drain';
import type { ReactionResult } from '../phases/reaction';
import type { WaitingResult } from '../phases/waiting';
import type { LatencySummary } from './server-load';

const latency = (l: LatencySummary): string =>
  l.samples === 0 ? 'n/a' : `${l.p50Ms} / ${l.p95Ms} / ${l.p99Ms} / ${l.maxMs} (${l.samples})`;

/** Figure 3: worker RSS per level held, beside the idle worker. */
export function waitingLines(w: WaitingResult): string[] {
  const lines = [
    `### 3. Scale of waiting (worker RSS, MiB; ${w.scale.wakers} operations wake every ${w.scale.wakerDelayMs / 2_000}-${w.scale.wakerDelayMs / 1_000} s, the rest wait ${w.sleeperDelayMs / 7_200_000}-${w.sleeperDelayMs / 3_600_000} h; workflow cache ${w.maxCachedWorkflows})`,
    '',
    "Each level is held with no starts for its window; RSS sampled every 2 s: highest sample, settled (median of the window's last three quarters), lowest. Heaps after a forced GC at the window's end.",
    '',
    '| operations waiting | window (s) | wakes (per minute) | worker RSS peak / settled / min | worker CPU (cores; ms per wake) | workflow heap after GC (MiB) | cached workflows | dev server RSS | rows by local state |',
    '|---|---|---|---|---|---|---|---|---|',
    `| 0 (idle baseline) | | | ${w.idle.workerRssMiB} | | ${w.idle.memory.afterGc.workflowThreads.reduce((a, t) => a + t.usedMiB, 0).toFixed(1)} | 0 | ${w.idle.serverRssMiB} | |`,
  ];
  for (const l of w.levels)
    lines.push(
      `| ${l.waiting} of ${l.started} | ${l.windowSeconds} | ${l.wakes} (${l.wakesPerMinute}) | ${l.workerRssPeakMiB} / **${l.workerRssSettledMiB}** / ${l.workerRssMinMiB} | ${l.workerCores}; ${l.workerCpuMsPerWake} | ${l.memory.afterGc.workflowThreads.reduce((a, t) => a + t.usedMiB, 0).toFixed(1)} | ${l.memory.asIs.workflowWorker.numCachedWorkflows} | ${l.serverRssSettledMiB} | ${Object.entries(
        l.states,
      )
        .map(([state, n]) => `${state} ${n}`)
        .join(', ')} |`,
    );
  lines.push(
    '',
    `Growth from the first level to the last: settled ${w.settledGrowthRatio}, peak ${w.peakGrowthRatio}. Highest RSS sampled at any time (starts included): ${w.workerRssPeakOverallMiB} MiB. Starts: ${w.startedPerSecond} per second over ${w.fillSeconds} s. Live workflow heap per cached workflow: ${w.liveHeapPerCachedWorkflowKiB ?? 'n/a'} KiB. ${w.cleanup}.`,
    '',
  );
  return lines;
}

/** Figure 4: each herd, asyncjob beside the naive loop, and the rate-limited run. */
export function fleetLines(f: FleetResult): string[] {
  const lines = [
    `### 4. Fleet pressure (policy ${f.policy.baseDelayMs}-${f.policy.maxDelayMs} ms, bounded jitter; 4 status reads per job; status loop ${f.statusLoop.herds === false ? 'off' : `on, waits up to ${f.statusLoop.herds.maxWaitMs} ms`})`,
    '',
    '| round | system | operations | creates spread (s) | complete (s) | status reads peak / mean (1-s buckets) | busy window | all requests peak / mean | server: workflow task schedule-to-start p99 (ms), dev server cores, machine busy |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  f.rounds.forEach((r, i) =>
    lines.push(
      `| ${i + 1} | ${r.system} | ${r.operations} | ${r.createSpreadSeconds} | ${r.completeSeconds} | ${r.statusReads.peakPerSecond} / ${r.statusReads.meanPerSecond} = **${r.statusReads.peakOverMean}** | ${r.statusReads.busyPeakOverMean} | ${r.all.peakOverMean} | ${r.server ? `${r.server.workflowTaskScheduleToStart.p99Ms}, ${r.server.serverCores}, ${Math.round(r.server.machineBusyShare * 100)}%${r.server.saturated ? ' **saturated**' : ''}` : ''} |`,
    ),
  );
  for (const size of f.sizes) {
    const a = size.statusReadsPeakOverMean.asyncjob;
    const n = size.statusReadsPeakOverMean.naive;
    lines.push(
      '',
      `Herds of ${size.operations}: status reads' peak / mean, min / median / max over rounds: asyncjob ${a.min} / **${a.median}** / ${a.max}, naive loop (the same plan, no engine) ${n.min} / **${n.median}** / ${n.max}; server ${size.saturated ? '**saturated**' : 'not saturated'} (saturated: workflow tasks after each create queued more than ${f.queueLimitMs} ms at p99, or the machine's CPU over 85%).`,
    );
  }
  lines.push(
    '',
    `Rate-limited run (${f.limited.operations} operations, limit ${f.limited.maxRequestsPerSecond}/s, the status loop ${f.statusLoop.limited === false ? 'off' : 'on'}): peak ${f.limited.all.peakPerSecond} per 1-s bucket over a mean of ${f.limited.all.meanPerSecond} = **${f.limited.all.peakOverMean}** (the target), ${f.limited.all.peakSlidingPerSecond} per sliding second, ${f.limited.withinLimit ? 'within' : '**over**'} the limit${f.limited.account ? `; ${describeAccount(f.limited.account)}` : ''}.`,
    '',
  );
  return lines;
}

/** Figure 5: webhook reaction with its breakdown, beside reaction by polling. */
export function reactionLines(x: ReactionResult): string[] {
  const b = x.webhook.breakdown;
  return [
    `### 5. Reaction (ms, p50 / p95 / p99 / max (samples); policy ${x.policy.baseDelayMs / 2}-${x.policy.baseDelayMs} ms between reads; one start every ${x.startSpacingMs} ms)`,
    '',
    '| measured | p50 / p95 / p99 / max (n) |',
    '|---|---|',
    `| **webhook arriving at the receiver -> confirming status read sent** | **${latency(x.webhook.reaction)}** |`,
    `| receiver's answer (posted -> answered) | ${latency(x.webhook.receiverAnswer)} |`,
    `| posted -> signal in the history | ${latency(b.receiverToSignal)} |`,
    `| signal -> next workflow task started | ${latency(b.signalToWorkflowTask)} |`,
    `| that workflow task, started -> completed | ${latency(b.workflowTask)} |`,
    `| read's activity scheduled -> started (${b.paths.activity_after_signal} reads) | ${latency(b.activityDispatch)} |`,
    `| read's activity started -> read at the simulator | ${latency(b.activityToRead)} |`,
    `| signal -> read, by an activity already running (${b.paths.activity_already_running} reads) | ${latency(b.signalToRead)} |`,
    `| baseline: no webhook, job finished -> next status read (the policy's wait) | ${latency(x.polling.reaction)} |`,
    ...(x.cancel === undefined
      ? []
      : [
          `| **cancel sent by the client while the status loop waits -> the provider's cancel request** | **${latency(x.cancel.reaction)}** |`,
          `| the client's cancel answered (the update) | ${latency(x.cancel.clientAnswer)} |`,
        ]),
    ...(x.webhookInRetryWait === undefined
      ? []
      : [
          `| **webhook arriving while the status activity waits for its next attempt (the signal path) -> confirming status read sent** | **${latency(x.webhookInRetryWait.reaction)}** |`,
        ]),
    ...(x.cancelInRetryWait === undefined
      ? []
      : [
          `| **cancel sent by the client while the status activity waits for its next attempt -> the provider's cancel request** | **${latency(x.cancelInRetryWait.reaction)}** |`,
        ]),
    '',
    `Reads not provably the webhook's (at or after the earliest planned read): ${x.webhook.notBeforePlannedRead}${x.webhookInRetryWait ? `, in a retry-driven wait ${x.webhookInRetryWait.notBeforePlannedRead}` : ''}. Server over the run: ${x.server.evidence}; activity task schedule-to-start p99 ${x.server.activityTaskScheduleToStart.p99Ms} ms.`,
    '',
  ];
}
