/**
 * What the status-loop tests read back from a real server and store: the activities a workflow scheduled, its local
 * activities' results, the journal, and the status requests counted so far.
 */
import { expect } from 'vitest';
import type { JournalEntryBody } from '../../src/core/journal';
import { ARRIVAL_LAG_MS, type Harness } from './harness';

/** The activities the workflow scheduled, by type, over every run of the operation. */
export async function scheduledActivities(h: Harness, operationId: string): Promise<string[]> {
  const history = await h.env.client.workflow.getHandle(operationId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

/** The results of the local activities of type `type` the workflow ran, from their markers in its history. */
export async function localActivityResults(h: Harness, operationId: string, type: string): Promise<unknown[]> {
  const history = await h.env.client.workflow.getHandle(operationId).fetchHistory();
  const decode = (payload: { data?: Uint8Array | null } | undefined): unknown =>
    JSON.parse(Buffer.from(payload?.data ?? new Uint8Array()).toString('utf8'));
  return (history.events ?? []).flatMap((event) => {
    const details = event.markerRecordedEventAttributes?.details;
    const data = details?.['data']?.payloads?.[0];
    if (data === undefined || (decode(data) as { activity_type?: string }).activity_type !== type) return [];
    return [decode(details?.['result']?.payloads?.[0])];
  });
}

export async function journal(
  h: Harness,
  operationId: string,
): Promise<{ actor: string; atMs: number; body: JournalEntryBody }[]> {
  return (await h.store.entries(operationId)).map(({ entry }) => ({
    actor: entry.actor,
    atMs: Date.parse(entry.at),
    body: entry.body,
  }));
}

/** Waits (polling the store, no fixed sleep) until the operation has counted `reads` status requests. */
export async function untilReadsCounted(h: Harness, operationId: string, reads: number): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const snapshot = await h.store.getOperation(operationId);
    const used = (snapshot?.record as { used?: { statusRequests?: number } } | undefined)?.used?.statusRequests ?? 0;
    if (used >= reads) return;
    if (Date.now() > end) throw new Error(`${operationId}: ${used} status requests counted, waiting for ${reads}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** S4, B2: the operation stopped at its budget: exactly `budget` reads sent, the escalation recorded by the worker. */
export async function expectBudgetStop(h: Harness, operationId: string, budget: number): Promise<void> {
  const summary = await h.client.result(operationId);
  expect(summary.escalation?.reason).toBe('request_budget_exhausted');
  expect(h.statusReads('rest', summary.jobId)).toHaveLength(budget);
  const escalation = (await journal(h, operationId)).find((entry) => entry.body.kind === 'escalation');
  expect(escalation?.actor).toMatch(/^worker:/);
}

/**
 * S3, B2: the operation stopped at its deadline: more than three reads, none at or after the deadline, every counted
 * read sent but at most the one the deadline overtook. Returns the reads the provider saw.
 */
export async function expectDeadlineStop(h: Harness, operationId: string): Promise<unknown[]> {
  const summary = await h.client.result(operationId);
  expect(summary.escalation?.reason).toBe('deadline_exceeded');
  const record = await h.client.get(operationId);
  const reads = h.statusReads('rest', record.jobId);
  expect(reads.length).toBeGreaterThan(3);
  for (const read of reads) expect(read.atMs).toBeLessThan(record.deadlines.resultDeadlineMs + ARRIVAL_LAG_MS);
  expect(record.used.statusRequests - reads.length).toBeGreaterThanOrEqual(0);
  expect(record.used.statusRequests - reads.length).toBeLessThanOrEqual(1);
  return reads;
}
