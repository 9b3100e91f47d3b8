/**
 * Everything one simulator instance knows, shared by its request handlers: the active scenario, dialect and
 * bearer token (replaceable at run time), the clock and random stream, the jobs, the accounting, sessions,
 * webhooks and the fault rule counters.
 */
import { Accounting } from './accounting';
import { SimulatorOptionsError, type SimulatorOptions } from './api';
import { lroDialect } from './dialects/lro';
import { operationLocationDialect } from './dialects/operation-location';
import { restDialect } from './dialects/rest';
import type { Dialect } from './dialects/types';
import { HeldDelays } from './held-delays';
import { JobStore, type SimJob } from './jobs';
import { PayloadCache } from './payloads';
import { seededRandom, type SeededRandom } from './random';
import { parseScenario, type DialectName, type Scenario, type ScenarioInput } from './scenario';
import { SessionRegistry } from './sessions';
import { StateAnnouncer } from './state-announcer';
import { WebhookDispatcher } from './webhooks';

const DIALECTS: Record<DialectName, Dialect> = {
  rest: restDialect,
  lro: lroDialect,
  'operation-location': operationLocationDialect,
};

/** The state of one simulator instance. */
export class SimulatorState {
  scenario: Scenario;
  dialect: Dialect;
  /** `Bearer <token>` as bytes, compared in constant time. */
  bearer: Buffer;
  /** How often each fault rule matched, per scope (reset with the scenario). */
  ruleCounters = new Map<string, number>();
  /** The base URL once listening (links in answers point here). */
  url = '';
  readonly clock: () => number;
  readonly random: SeededRandom;
  readonly maxBodyBytes: number;
  readonly accounting: Accounting;
  readonly jobs: JobStore;
  readonly webhooks: WebhookDispatcher;
  readonly payloads = new PayloadCache();
  readonly delays = new HeldDelays();
  readonly sessions = new SessionRegistry(() => this.scenario.session);
  readonly announcer = new StateAnnouncer(this);

  /** Validates the options; throws ScenarioError or SimulatorOptionsError naming the field. */
  constructor(private readonly options: SimulatorOptions) {
    this.scenario = parseScenario(options.scenario ?? {}, '(options.scenario)');
    const dialect = options.dialect ?? this.scenario.dialect ?? 'rest';
    if (!(dialect in DIALECTS)) throw new SimulatorOptionsError(`dialect: unknown dialect "${String(dialect)}"`);
    this.dialect = DIALECTS[dialect];
    const token = options.token ?? this.scenario.token;
    if (token === undefined || token === '')
      throw new SimulatorOptionsError('token: a bearer token is required (options.token or scenario.token)');
    this.bearer = Buffer.from(`Bearer ${token}`);
    this.clock = options.clock ?? Date.now;
    this.random = seededRandom(options.seed ?? this.scenario.seed ?? 1);
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.accounting = new Accounting(options.maxRecordedRequests ?? this.scenario.maxRecordedRequests ?? 100_000);
    this.jobs = new JobStore(
      () => this.random,
      (job, change) => this.announcer.onStateEntered(job, change),
    );
    this.webhooks = new WebhookDispatcher(options.webhook ?? this.scenario.webhook, this.clock);
  }

  /** Validates and installs a scenario; what it leaves out (dialect, token, webhook) stays as it was. */
  install(input: ScenarioInput): void {
    const scenario = parseScenario(input, '(setScenario)');
    this.scenario = scenario;
    if (scenario.dialect !== undefined) this.dialect = DIALECTS[scenario.dialect];
    if (scenario.token !== undefined) this.bearer = Buffer.from(`Bearer ${scenario.token}`);
    if (scenario.webhook !== undefined) this.webhooks.setTarget(scenario.webhook);
    this.ruleCounters = new Map();
  }

  /**
   * Forgets jobs, sessions, records, rule counters and webhook records. The random stream is not restarted: a
   * straggling request from before the reset must not find a new job with the same ID.
   */
  clear(): void {
    this.announcer.clear();
    this.jobs.clear();
    this.sessions.clear();
    this.accounting.clear();
    this.ruleCounters = new Map();
    this.webhooks.clear();
  }

  /** A job by public (`operations/...`) or raw ID. */
  findJob(jobId: string): SimJob | undefined {
    return this.jobs.get(jobId.startsWith('operations/') ? jobId.slice('operations/'.length) : jobId);
  }

  /** The other origin used by the `foreign_location` fault, without a trailing slash. */
  foreignBaseUrl(): string {
    return (this.options.foreignBaseUrl ?? this.scenario.foreignBaseUrl ?? 'http://foreign.invalid').replace(
      /\/+$/,
      '',
    );
  }
}
