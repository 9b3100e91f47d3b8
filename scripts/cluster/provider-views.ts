/**
 * The cluster's providers, each a simulator in a process of its own. A provider stamps each request as it
 * arrives, and the run's own work (starting operations, the chaos, reading histories back) must never delay that
 * stamp: with the simulators inside the run's process, a pause of its event loop once held four requests written
 * on fleet slots 110 ms apart and stamped them within 41 ms of each other, and the rate check counted 11 in a
 * second that the workers had kept to 10. The run reads each provider's accounting over HTTP into a view: the
 * progress from a view refreshed as the run goes, every check from one refreshed after the run.
 */
import type { JobSummary, RequestFilter, RequestRecord, SimulatorOptions } from '../../src/simulator';
import { startSimulatorProcess, type SimProcess } from '../../bench/lib/processes';
import type { ProviderRecords } from '../load/verify';

/** Whether `record` matches every field `filter` gives, as the simulator's own filter does. */
function matches(record: RequestRecord, filter: RequestFilter): boolean {
  return (
    (filter.action === undefined || record.action === filter.action) &&
    (filter.jobId === undefined || record.jobId === filter.jobId) &&
    (filter.idempotencyKey === undefined || record.idempotencyKey === filter.idempotencyKey) &&
    (filter.method === undefined || record.method === filter.method) &&
    (filter.sinceSeq === undefined || record.seq > filter.sinceSeq)
  );
}

/** A provider's accounting as of its last refresh. */
export class ProviderView implements ProviderRecords {
  private records: RequestRecord[] = [];
  private jobList: JobSummary[] = [];

  private constructor(private readonly process: SimProcess) {}

  /** Starts the simulator in its own process. */
  static async start(options: SimulatorOptions): Promise<ProviderView> {
    return new ProviderView(await startSimulatorProcess(options));
  }

  get url(): string {
    return this.process.url;
  }

  /** Reads the provider's requests (its own `/_sim/` endpoints left out) and jobs as they are now. */
  async refresh(): Promise<void> {
    [this.records, this.jobList] = await Promise.all([this.process.requests(), this.process.jobs()]);
  }

  requests(filter: RequestFilter = {}): RequestRecord[] {
    return this.records.filter((record) => matches(record, filter));
  }

  jobs(): JobSummary[] {
    return this.jobList;
  }

  jobsByToken(token: string): JobSummary[] {
    return this.jobList.filter((job) => job.idempotencyKey === token);
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}
