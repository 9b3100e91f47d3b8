/**
 * The provider requests the network held through the partition. The fleet's limit bounds when requests are
 * written (`src/core/send-slot.ts`): a request written on its slot reaches the provider within the delivery guard,
 * as long as the network delivers it. A request the cut-off worker wrote just before the cut, or in the first moments
 * of it on a slot it already held, sits in its kernel's retransmission queue instead, and reaches the provider when
 * the network comes back, beside requests written on their own slots since. No sender can keep a network from
 * delivering late what it already took; the run tells these requests apart, by the worker's own account of each
 * call (its `provider call` log line: the provider's request ID, when the answer came and how long the call took),
 * and reports them instead of counting them against the limit. Every other request is held to the limit strictly.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RequestRecord } from '../../src/simulator/accounting';

/** When the partition cut the worker off and when it joined it again, epoch ms. */
export interface PartitionSpan {
  readonly cutAtMs: number;
  readonly restoredAtMs: number;
}

/** One provider call as the worker logged it. */
export interface LoggedCall {
  /** The provider's name, as registered with the worker. */
  readonly provider: string;
  /** The request ID the provider answered (each simulator numbers its own). */
  readonly providerRequestId: string;
  /** When the call started (the answer's instant less the call's duration), epoch ms. */
  readonly startedAtMs: number;
}

/** The provider calls in one worker log's text (JSON lines; other lines are skipped). */
export function loggedCalls(text: string): LoggedCall[] {
  const calls: LoggedCall[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: unknown; ts?: unknown; provider?: unknown; providerRequestId?: unknown; durationMs?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    const { msg, ts, provider, providerRequestId, durationMs } = entry;
    if (msg !== 'provider call' || typeof provider !== 'string' || typeof providerRequestId !== 'string') continue;
    if (typeof ts !== 'string' || typeof durationMs !== 'number') continue;
    calls.push({ provider, providerRequestId, startedAtMs: Date.parse(ts) - durationMs });
  }
  return calls;
}

/**
 * The requests (by request ID) the network held through the partition's `spans` (each time the worker was cut off)
 * on their way to `provider`: calls of the cut-off worker (`calls`) that started before it was joined again and
 * reached the provider (`records`, its request log) after it was cut, in one span. The cut-off worker reaches
 * nothing while it is cut off, so such a request arrived as the network came back.
 */
export function heldThrough(
  spans: readonly PartitionSpan[],
  provider: string,
  calls: readonly LoggedCall[],
  records: readonly RequestRecord[],
): Set<string> {
  const started = new Map(
    calls.filter((call) => call.provider === provider).map((call) => [call.providerRequestId, call.startedAtMs]),
  );
  const heldBy = (span: PartitionSpan, record: RequestRecord): boolean => {
    const startedAtMs = started.get(record.requestId);
    return startedAtMs !== undefined && startedAtMs < span.restoredAtMs && record.atMs >= span.cutAtMs;
  };
  return new Set(
    records.filter((record) => spans.some((span) => heldBy(span, record))).map((record) => record.requestId),
  );
}

/** The provider calls logged by every incarnation of worker slot `slot` (`worker-<slot>-<n>.log` in `logDir`). */
export async function callsOfSlot(logDir: string, slot: number): Promise<LoggedCall[]> {
  const files = (await readdir(logDir)).filter((name) => name.startsWith(`worker-${slot}-`) && name.endsWith('.log'));
  const texts = await Promise.all(files.map((name) => readFile(path.join(logDir, name), 'utf8')));
  return texts.flatMap(loggedCalls);
}
