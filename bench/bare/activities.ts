/**
 * The bare Temporal baseline's activities: the same three provider calls as asyncjob's (create, status read,
 * result download with SHA-256 check), with no journal, no snapshot, no store, no redaction.
 */
import { plainCalls, type PlainProvider, type VerifiedResult } from '../lib/provider-calls';

/** The bare activities. */
export interface BareActivities {
  bareCreateJob(payload: unknown): Promise<string>;
  bareReadStatus(jobId: string): Promise<string>;
  bareCollectResult(jobId: string): Promise<VerifiedResult>;
}

/** Activities over one provider; `close` releases the pooled connections. */
export function createBareActivities(provider: PlainProvider): { activities: BareActivities; close(): Promise<void> } {
  const calls = plainCalls(provider);
  return {
    activities: {
      bareCreateJob: (payload) => calls.createJob(payload),
      bareReadStatus: (jobId) => calls.readStatus(jobId),
      bareCollectResult: (jobId) => calls.collectResult(jobId),
    },
    close: () => calls.close(),
  };
}
