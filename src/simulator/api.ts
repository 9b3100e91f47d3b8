/**
 * The simulator's public surface: the options of `startSimulator`, the running {@link Simulator} handle, the job
 * summaries it reports, and the error thrown for invalid options.
 */
import type { RequestFilter, RequestRecord } from './accounting';
import { AsyncJobError } from '../core/errors';
import type { DialectName, ScenarioInput } from './scenario';
import type { WebhookDeliveryRecord, WebhookTarget } from './webhooks';

/** Options of `startSimulator`. */
export interface SimulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on (default `127.0.0.1`). */
  host?: string;
  /** The dialect; defaults to the scenario's, else `rest`. */
  dialect?: DialectName;
  /** The bearer token required on provider endpoints; defaults to the scenario's. Required one way or the other. */
  token?: string;
  scenario?: ScenarioInput;
  /** Seed for job IDs and random durations; defaults to the scenario's, else 1. */
  seed?: number;
  /** Webhook target; defaults to the scenario's. */
  webhook?: WebhookTarget;
  /** The simulator clock (ms since the epoch) for lifecycles and records; defaults to `Date.now`. */
  clock?: () => number;
  /** The other origin used by the `foreign_location` fault (default `http://foreign.invalid`). */
  foreignBaseUrl?: string;
  /** Cap on request records kept (default 100,000; oldest dropped first). */
  maxRecordedRequests?: number;
  /** Largest request body accepted (default 1 MiB; larger gets 413). */
  maxBodyBytes?: number;
}

/** A job as reported by the accounting. */
export interface JobSummary {
  /** The job ID as the dialect shows it (`job_...`, `operations/...`, a UUID). */
  jobId: string;
  /** The ID used in paths. */
  rawId: string;
  idempotencyKey?: string;
  clientReference?: string;
  scriptName: string;
  state: string;
  createdAt: string;
  statusReads: number;
  cancelRequested: boolean;
  history: { state: string; at: string }[];
}

/** Options of {@link Simulator.deliverWebhook}. */
export interface DeliverWebhookOptions {
  /** The neutral state to report (default: the job's current state). */
  state?: string;
  eventId?: string;
  /** False signs with a wrong secret. */
  signedCorrectly?: boolean;
  delayMs?: number;
}

/** A running simulator. */
export interface Simulator {
  /** The base URL, `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** The active dialect. */
  readonly dialect: DialectName;
  /** Stops listening, closes connections and waits for webhook deliveries in flight. */
  stop(): Promise<void>;
  /** Forgets jobs, request records, fault counters and webhook records; keeps the scenario and the random stream. */
  reset(): void;
  /** Validates and installs a scenario (throws ScenarioError naming the field); existing jobs keep their scripts. */
  setScenario(scenario: ScenarioInput): void;
  /** Request records in arrival order, optionally filtered; a request is recorded once it is answered. */
  requests(filter?: RequestFilter): RequestRecord[];
  /** Requests a `delay` fault holds now: received, not yet answered (so not yet in {@link requests}). */
  heldRequests(): number;
  /** Every job, oldest first. */
  jobs(): JobSummary[];
  /** One job by public or raw ID. */
  job(jobId: string): JobSummary | undefined;
  /** Every job created under an idempotency token (exactly one when idempotency held). */
  jobsByToken(token: string): JobSummary[];
  /** The number of jobs created. */
  createdJobCount(): number;
  /** Every webhook delivery attempt. */
  webhookDeliveries(): WebhookDeliveryRecord[];
  /**
   * Session mode: every session cookie value issued for a job, oldest first (in-process only, never served over
   * HTTP), so a test can prove none of them leaked into a journal, a history or a log.
   */
  issuedSessions(jobId: string): string[];
  /** Sends one webhook event for a job now (or after `delayMs`); resolves with the delivery record. */
  deliverWebhook(jobId: string, options?: DeliverWebhookOptions): Promise<WebhookDeliveryRecord>;
}

/** Thrown for invalid simulator options. */
export class SimulatorOptionsError extends AsyncJobError {
  constructor(message: string) {
    super('ASYNCJOB_ERR_SIM_OPTIONS', message);
  }
}
