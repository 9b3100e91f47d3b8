/**
 * The bare Temporal baseline's activities: the same three provider calls as asyncjob's (create, status read,
 * result download with SHA-256 check), with no journal, no snapshot, no store, no redaction. Create and status
 * read also return when they started, from which the workflow plans the next read as asyncjob does.
 */
import { plainCalls, type PlainProvider, type VerifiedResult } from '../lib/provider-calls';

/** A provider call's answer and the epoch ms at which the call started (asyncjob's step time). */
interface BareAnswer<T> {
  value: T;
  startedAtMs: number;
}

/** The bare activities. */
export interface BareActivities {
  bareCreateJob(payload: unknown): Promise<BareAnswer<string>>;
  bareReadStatus(jobId: string): Promise<BareAnswer<string>>;
  bareCollectResult(jobId: string): Promise<VerifiedResult>;
}

async function timed<T>(call: () => Promise<T>): Promise<BareAnswer<T>> {
  const startedAtMs = Date.now();
  return { value: await call(), startedAtMs };
}

/** Activities over one provider; `close` releases the pooled connections. */
export function createBareActivities(provider: PlainProvider): { activities: BareActivities; close(): Promise<void> } {
  const calls = plainCalls(provider);
  return {
    activities: {
      bareCreateJob: (payload) => timed(() => calls.createJob(payload)),
      bareReadStatus: (jobId) => timed(() => calls.readStatus(jobId)),
      bareCollectResult: (jobId) => calls.collectResult(jobId),
    },
    close: () => calls.close(),
  };
}
