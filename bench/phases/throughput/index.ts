/**
 * Figure 1 (throughput, start to verified result) and figure 2 (per-poll cost), at three poll policies: the
 * bench's short one (5-20 ms, under which no system ever waits on a timer) and production-like 1 s and 5 s
 * (under which both durable systems start one timer per read while the server keeps up). Three systems make the
 * same calls against the same simulator (create, status reads until `succeeded`, result download with SHA-256
 * check) with the same poll timing (bench/bare/poll-plan.ts): asyncjob (durable, journaled), a bare Temporal
 * workflow (durable, no record keeping) and a naive in-process loop (no durability: the ceiling). asyncjob and
 * bare run in alternated rounds (A B B A A B ...) so drift on a shared machine hits both alike.
 */
export { measureThroughput } from './measure-throughput';
export { measurePerPoll } from './per-poll';

export type { PerPollResult, ThroughputResult } from './result';
export { throughputTargets, type BenchTarget } from './targets';
