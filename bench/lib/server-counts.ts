/**
 * What the dev server did for a namespace, from its own Prometheus counters (`--metrics-port`): the writes it
 * persisted for workflows and their tasks, and the activity heartbeats it received. Read before and after a window,
 * the difference is what that window's operations cost the server; figure 2 runs each durable system in a namespace
 * of its own, so each one's counts are its own.
 *
 * A persisted write is a persistence request of the history or matching service that is not a read (creating and
 * updating a workflow's state and history, task writes and their completion), whatever it carries: a heartbeat, a
 * failed attempt of an activity and an event batch are one write each. Task-queue metadata (`*TaskQueue*`: a queue
 * created when first polled, its lease renewed) is left out: it is per queue, not per operation. Visibility writes
 * (start, search-attribute upserts, close) are left out too: the server counts them without a namespace.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One namespace's counts. */
export interface ServerCounts {
  /** Persisted writes of the history and matching services (see above). */
  writes: number;
  /** `RecordActivityTaskHeartbeat` requests the frontend received (each one a write too). */
  heartbeats: number;
}

const READ_OPERATION = /^(Get|List|Read|Scan|Assert|Watch|Count|Describe|Is)/;

/** The counter names as the server labels namespaces: `-` becomes `_`. */
const labelOf = (namespace: string): string => namespace.replace(/-/g, '_');

/** Reads the counts of `namespaces` from the server's metrics endpoint. */
export async function readServerCounts(
  metricsPort: number,
  namespaces: readonly string[],
): Promise<Record<string, ServerCounts>> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`metrics endpoint answered ${response.status}`);
  const families = parsePrometheusTextFormat(await response.text());
  const out: Record<string, ServerCounts> = {};
  for (const namespace of namespaces) out[namespace] = { writes: 0, heartbeats: 0 };
  const byLabel = new Map(namespaces.map((n) => [labelOf(n), out[n]!]));
  for (const family of families) {
    if (family.name !== 'persistence_requests' && family.name !== 'service_requests') continue;
    for (const metric of family.metrics) {
      const counts = byLabel.get(metric.labels?.namespace ?? '');
      const operation = metric.labels?.operation ?? '';
      const service = metric.labels?.service_name ?? '';
      if (counts === undefined || metric.value === undefined) continue;
      const value = Number(metric.value);
      if (family.name === 'service_requests') {
        if (service === 'frontend' && operation.startsWith('RecordActivityTaskHeartbeat')) counts.heartbeats += value;
      } else if (
        (service === 'history' || service === 'matching') &&
        !READ_OPERATION.test(operation) &&
        !operation.includes('TaskQueue')
      ) {
        counts.writes += value;
      }
    }
  }
  return out;
}

/** What happened between two readings. */
export function countsBetween(
  before: Record<string, ServerCounts>,
  after: Record<string, ServerCounts>,
): Record<string, ServerCounts> {
  const out: Record<string, ServerCounts> = {};
  for (const [namespace, a] of Object.entries(after)) {
    const b = before[namespace] ?? { writes: 0, heartbeats: 0 };
    out[namespace] = { writes: a.writes - b.writes, heartbeats: a.heartbeats - b.heartbeats };
  }
  return out;
}
