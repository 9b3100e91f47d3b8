/**
 * The simulator's HTTP server (node:http): bearer authentication, routing to the active dialect, fault
 * injection, accounting of every request, webhook emission, and the reserved test endpoints under `/_sim/`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { canonicalJson } from '../core/canonical-json';
import {
  Accounting,
  type AuthorizationSeen,
  type RequestFilter,
  type RequestRecord,
  type SessionSeen,
} from './accounting';
import { lroDialect } from './dialects/lro';
import { operationLocationDialect } from './dialects/operation-location';
import { restDialect } from './dialects/rest';
import type { Advertised, CreateOutcome, Dialect, DialectContext, SimResponse, SimRoute } from './dialects/types';
import { iso } from './dialects/types';
import { FAULT_HEADER, faultLabel, parseFaultHeader, pickRuleFault, type Fault } from './faults';
import { JobStore, TERMINAL_STATES, type SimJob, type StateChange } from './jobs';
import { PayloadCache } from './payloads';
import { seededRandom, type SeededRandom } from './random';
import {
  parseScenario,
  parseScenarioText,
  ScenarioError,
  scriptByName,
  selectScriptName,
  type DialectName,
  type Scenario,
  type ScenarioInput,
} from './scenario';
import { WebhookDispatcher, type WebhookDeliveryRecord, type WebhookTarget } from './webhooks';

/** Options of {@link startSimulator}. */
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
  /** Request records in arrival order, optionally filtered. */
  requests(filter?: RequestFilter): RequestRecord[];
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

const DIALECTS: Record<DialectName, Dialect> = {
  rest: restDialect,
  lro: lroDialect,
  'operation-location': operationLocationDialect,
};

/** Thrown for invalid simulator options. */
export class SimulatorOptionsError extends Error {
  readonly code = 'ASYNCJOB_ERR_SIM_OPTIONS';
  constructor(message: string) {
    super(message);
    this.name = 'SimulatorOptionsError';
  }
}

class BodyTooLarge extends Error {}

class SimulatorServer implements Simulator {
  url = '';
  port = 0;
  private scenario: Scenario;
  private dialectImpl: Dialect;
  private tokenBytes: Buffer;
  private readonly clock: () => number;
  private readonly random: SeededRandom;
  private readonly jobStore: JobStore;
  private readonly accounting: Accounting;
  private readonly payloads = new PayloadCache();
  private readonly webhooks: WebhookDispatcher;
  private ruleCounters = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private readonly advanceTimers = new Map<string, NodeJS.Timeout>();
  private readonly delays = new Map<NodeJS.Timeout, () => void>();
  private readonly server: Server;
  private readonly maxBodyBytes: number;
  /** Session mode: the current session cookie value of each job (raw job ID). */
  private readonly sessions = new Map<string, string>();
  /** Session mode: every value issued per job (raw job ID), for {@link Simulator.issuedSessions}. */
  private readonly issued = new Map<string, string[]>();

  constructor(private readonly options: SimulatorOptions) {
    this.scenario = parseScenario(options.scenario ?? {}, '(options.scenario)');
    const dialect = options.dialect ?? this.scenario.dialect ?? 'rest';
    if (!(dialect in DIALECTS)) throw new SimulatorOptionsError(`dialect: unknown dialect "${String(dialect)}"`);
    this.dialectImpl = DIALECTS[dialect];
    const token = options.token ?? this.scenario.token;
    if (token === undefined || token === '')
      throw new SimulatorOptionsError('token: a bearer token is required (options.token or scenario.token)');
    this.tokenBytes = Buffer.from(`Bearer ${token}`);
    this.clock = options.clock ?? Date.now;
    this.random = seededRandom(options.seed ?? this.scenario.seed ?? 1);
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.accounting = new Accounting(options.maxRecordedRequests ?? this.scenario.maxRecordedRequests ?? 100_000);
    this.jobStore = new JobStore(
      () => this.random,
      (job, change) => this.onStateEntered(job, change),
    );
    this.webhooks = new WebhookDispatcher(options.webhook ?? this.scenario.webhook, this.clock);
    this.server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) {
          this.write(
            res,
            {
              status: 500,
              json: { error: { code: 'simulator_error', message: err instanceof Error ? err.message : String(err) } },
            },
            'sim',
          );
        }
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get dialect(): DialectName {
    return this.dialectImpl.name;
  }

  async listen(): Promise<void> {
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address() as AddressInfo;
    this.port = addr.port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  }

  async stop(): Promise<void> {
    for (const t of this.advanceTimers.values()) clearTimeout(t);
    this.advanceTimers.clear();
    // Requests held by a `delay` fault are released at once (their sockets are destroyed below).
    for (const [t, release] of this.delays) {
      clearTimeout(t);
      release();
    }
    this.delays.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await Promise.all([closed, this.webhooks.stop()]);
  }

  reset(): void {
    for (const t of this.advanceTimers.values()) clearTimeout(t);
    this.advanceTimers.clear();
    this.jobStore.clear();
    this.sessions.clear();
    this.issued.clear();
    this.accounting.clear();
    this.ruleCounters = new Map();
    this.webhooks.clear();
    // The random stream is not restarted: a straggling request from before the reset must not find a new job
    // with the same ID. Two simulators with the same seed produce the same IDs.
  }

  setScenario(input: ScenarioInput): void {
    const scenario = parseScenario(input, '(setScenario)');
    this.scenario = scenario;
    if (scenario.dialect !== undefined) this.dialectImpl = DIALECTS[scenario.dialect];
    if (scenario.token !== undefined) this.tokenBytes = Buffer.from(`Bearer ${scenario.token}`);
    if (scenario.webhook !== undefined) this.webhooks.setTarget(scenario.webhook);
    this.ruleCounters = new Map();
  }

  requests(filter?: RequestFilter): RequestRecord[] {
    return this.accounting.list(filter);
  }

  jobs(): JobSummary[] {
    return this.jobStore.all().map((j) => this.summary(j));
  }

  job(jobId: string): JobSummary | undefined {
    const job = this.findJob(jobId);
    return job ? this.summary(job) : undefined;
  }

  jobsByToken(token: string): JobSummary[] {
    return this.jobStore.byIdempotencyToken(token).map((j) => this.summary(j));
  }

  createdJobCount(): number {
    return this.jobStore.count();
  }

  webhookDeliveries(): WebhookDeliveryRecord[] {
    return this.webhooks.deliveries();
  }

  issuedSessions(jobId: string): string[] {
    const job = this.findJob(jobId);
    return job === undefined ? [] : [...(this.issued.get(job.id) ?? [])];
  }

  async deliverWebhook(jobId: string, options: DeliverWebhookOptions = {}): Promise<WebhookDeliveryRecord> {
    const job = this.findJob(jobId);
    if (!job) throw new SimulatorOptionsError(`jobId: no job "${jobId}"`);
    const now = this.clock();
    const state = options.state ?? this.jobStore.advance(job, now);
    return this.webhooks.deliver(
      {
        event_id: options.eventId ?? `evt_${job.id}_manual_${now}`,
        job_id: job.id,
        state: this.dialectImpl.publicState(state),
        occurred_at: iso(now),
      },
      { signedCorrectly: options.signedCorrectly, delayMs: options.delayMs },
    );
  }

  private findJob(jobId: string): SimJob | undefined {
    return this.jobStore.get(jobId.startsWith('operations/') ? jobId.slice('operations/'.length) : jobId);
  }

  private summary(job: SimJob): JobSummary {
    const state = this.jobStore.advance(job, this.clock());
    return {
      jobId: this.dialectImpl.publicJobId(job.id),
      rawId: job.id,
      idempotencyKey: job.token,
      clientReference: job.clientReference,
      scriptName: job.scriptName,
      state,
      createdAt: iso(job.createdAtMs),
      statusReads: job.statusReads,
      cancelRequested: job.cancel !== undefined,
      history: job.history.map((h) => ({ state: h.state, at: iso(h.atMs) })),
    };
  }

  private onStateEntered(job: SimJob, change: StateChange): void {
    if (!this.webhooks.enabled()) return;
    const terminal = TERMINAL_STATES.has(change.state);
    // The initial state is announced only when the job starts finished (a synchronous or instant job).
    if (job.history.length > 1 || terminal) {
      this.webhooks.emit(
        {
          event_id: `evt_${job.id}_${job.history.length - 1}`,
          job_id: job.id,
          state: this.dialectImpl.publicState(change.state),
          occurred_at: iso(change.atMs),
        },
        job.script.webhook,
        terminal,
      );
    }
    // Time-based steps advance lazily on reads; with webhooks on, a timer makes them happen unobserved too.
    const previous = this.advanceTimers.get(job.id);
    if (previous) clearTimeout(previous);
    this.advanceTimers.delete(job.id);
    const waitMs = terminal ? undefined : this.jobStore.msUntilNextChange(job, change.atMs);
    if (waitMs === undefined) return;
    const timer = setTimeout(() => {
      this.advanceTimers.delete(job.id);
      this.jobStore.advance(job, Math.max(this.clock(), change.atMs + waitMs));
    }, waitMs + 1);
    timer.unref();
    this.advanceTimers.set(job.id, timer);
  }

  private authorization(req: IncomingMessage): AuthorizationSeen {
    const header = req.headers.authorization;
    if (header === undefined) return 'absent';
    const given = Buffer.from(header);
    return given.length === this.tokenBytes.length && timingSafeEqual(given, this.tokenBytes) ? 'valid' : 'invalid';
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const atMs = this.clock();
    const seq = this.accounting.nextSeq();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const queryString = q === -1 ? '' : rawUrl.slice(q + 1);
    const method = req.method ?? 'GET';
    const record: RequestRecord = {
      seq,
      atMs,
      method,
      path,
      query: queryString,
      action: 'unknown',
      authorization: this.authorization(req),
      requestId: `req_${seq}`,
    };
    const trace = req.headers['x-trace-id'];
    if (typeof trace === 'string') record.traceId = trace;
    const traceparent = req.headers['traceparent'];
    if (typeof traceparent === 'string') record.traceparent = traceparent;
    const recorded = this.recordedHeaders(req);
    if (recorded !== undefined) record.headers = recorded;

    if (path.startsWith('/_sim/')) {
      record.action = 'sim';
      return this.handleSim(req, res, path, new URLSearchParams(queryString), record);
    }

    if (record.authorization !== 'valid') {
      req.resume();
      return this.finish(res, record, { status: 401, json: { error: { code: 'unauthenticated' } } });
    }
    const dialect = this.dialectImpl;
    const route = dialect.route(method, path);
    if (!route) {
      req.resume();
      return this.finish(res, record, {
        status: 404,
        json: { error: { code: 'not_found', message: `no endpoint ${method} ${path}` } },
      });
    }
    record.action = route.action;

    let body: unknown;
    try {
      body = await this.readJson(req);
    } catch (err) {
      if (err instanceof BodyTooLarge)
        return this.finish(res, record, { status: 413, json: { error: { code: 'payload_too_large' } } });
      return this.finish(res, record, {
        status: 400,
        json: { error: { code: 'invalid_json', message: 'the request body is not JSON' } },
      });
    }
    const query = new URLSearchParams(queryString);
    const simReq = { headers: req.headers, query, body };
    const token = dialect.tokenOf(route, simReq);
    if (token !== undefined) record.idempotencyKey = token;

    const headerFault = parseFaultHeader(req.headers[FAULT_HEADER]);
    if (headerFault.kind === 'invalid') {
      return this.finish(res, record, {
        status: 400,
        json: { error: { code: 'sim_bad_fault', message: headerFault.message } },
      });
    }
    const job = route.jobId !== undefined ? this.jobStore.get(route.jobId) : undefined;
    if (job) record.jobId = dialect.publicJobId(job.id);
    const scriptName = route.action === 'create' ? selectScriptName(this.scenario, body) : undefined;
    const fault = headerFault.kind === 'fault' ? headerFault.fault : this.ruleFault(route, job, scriptName, token);
    if (fault) record.fault = faultLabel(fault);

    // Faults that answer (or break) before the provider does anything.
    switch (fault?.kind) {
      case 'reset':
        this.accounting.push(record);
        res.socket?.resetAndDestroy();
        return;
      case 'http_error':
        return this.finish(res, record, httpError(fault, this.clock()));
      case 'delay':
        await this.sleep(fault.ms);
        if (res.destroyed || !res.socket || res.socket.destroyed) {
          this.accounting.push(record);
          return;
        }
        break;
      case 'not_found_for':
        if (job && this.clock() - job.createdAtMs < fault.ms) {
          return this.finish(res, record, {
            status: 404,
            json: { error: { code: 'not_found', message: 'no such job' } },
          });
        }
        break;
      default:
        break;
    }
    if (route.jobId !== undefined && !job) {
      return this.finish(res, record, {
        status: 404,
        json: { error: { code: 'not_found', message: `no job ${route.jobId}` } },
      });
    }
    // Session mode: a job action that needs the session is refused without it, before the job sees the request
    // (a refused status read is not counted and does not move a poll-based step).
    const needsSession = job !== undefined && this.sessionRequired(route.action);
    if (job !== undefined && needsSession) {
      record.session = this.sessionSeen(req, job.id);
      if (record.session !== 'valid') {
        return this.finish(res, record, {
          status: 400,
          json: {
            error: {
              code: 'session_required',
              message: 'this request needs the session cookie set by the create answer',
            },
          },
        });
      }
    }

    const nowMs = this.clock();
    if (job) this.jobStore.advance(job, nowMs, route.action === 'status');
    const ctx = this.context(nowMs, fault, job, scriptName ?? this.scenario.defaultScript);
    const answered = dialect.handle(route, simReq, ctx);
    if (ctx.job && !record.jobId) record.jobId = dialect.publicJobId(ctx.job.id);
    const response = this.withSessionCookie(route.action, needsSession, ctx.job, answered);

    // Faults that act after the provider processed the request.
    if (fault?.kind === 'drop') {
      this.accounting.push(record);
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'malformed') return this.malformed(res, record, response, fault);
    if (fault?.kind === 'truncated') return this.truncated(res, record, response);
    return this.finish(res, record, response);
  }

  /** The request headers the scenario asks to record, or undefined when none are asked for or present. */
  private recordedHeaders(req: IncomingMessage): Record<string, string> | undefined {
    const names = this.scenario.recordHeaders;
    if (names.length === 0) return undefined;
    const out: Record<string, string> = {};
    for (const name of names) {
      const value = req.headers[name];
      if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }

  private sessionRequired(action: SimRoute['action']): boolean {
    const session = this.scenario.session;
    return session?.cookie === true && (session.requireOn as readonly string[]).includes(action);
  }

  /** Whether the request carries the job's current session cookie (compared in constant time). */
  private sessionSeen(req: IncomingMessage, jobId: string): SessionSeen {
    const name = this.scenario.session?.name ?? 'sim_session';
    const header = req.headers.cookie;
    const pairs = (Array.isArray(header) ? header.join('; ') : (header ?? '')).split(';').map((p) => p.trim());
    const sent = pairs.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1);
    if (sent === undefined) return 'absent';
    const expected = this.sessions.get(jobId);
    if (expected === undefined) return 'invalid';
    const a = Buffer.from(sent);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b) ? 'valid' : 'invalid';
  }

  /**
   * Session mode: a 2xx create answer opens the job's session (a repeated create gets the same one), and with
   * `rotate` every accepted answer of a session action sets a new value.
   */
  private withSessionCookie(
    action: SimRoute['action'],
    checked: boolean,
    job: SimJob | undefined,
    response: SimResponse,
  ): SimResponse {
    const session = this.scenario.session;
    if (session?.cookie !== true || job === undefined || response.status < 200 || response.status >= 300)
      return response;
    let value: string | undefined;
    if (action === 'create') value = this.sessions.get(job.id) ?? randomBytes(16).toString('hex');
    else if (checked && session.rotate) value = randomBytes(16).toString('hex');
    if (value === undefined) return response;
    if (this.sessions.get(job.id) !== value)
      (this.issued.get(job.id) ?? this.issued.set(job.id, []).get(job.id)!).push(value);
    this.sessions.set(job.id, value);
    return {
      ...response,
      headers: { ...response.headers, 'set-cookie': `${session.name}=${value}; Path=/; HttpOnly` },
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.delays.delete(t);
        resolve();
      }, ms);
      this.delays.set(t, resolve);
    });
  }

  private ruleFault(
    route: SimRoute,
    job: SimJob | undefined,
    scriptName: string | undefined,
    token: string | undefined,
  ): Fault | undefined {
    const scope = job ? `job:${job.id}` : token !== undefined ? `token:${token}` : 'global';
    const scriptRules = job
      ? job.script.faults
      : scriptName !== undefined
        ? scriptByName(this.scenario, scriptName).faults
        : [];
    const fromScript = pickRuleFault(
      scriptRules,
      route.action,
      `${job ? '' : `script:${scriptName}|`}${scope}`,
      this.ruleCounters,
    );
    const fromScenario = pickRuleFault(this.scenario.faults, route.action, `scenario|${scope}`, this.ruleCounters);
    return fromScript ?? fromScenario;
  }

  private context(
    nowMs: number,
    fault: Fault | undefined,
    job: SimJob | undefined,
    scriptName: string,
  ): DialectContext {
    const ctx: DialectContext = {
      nowMs,
      jobs: this.jobStore,
      fault,
      job,
      linkBase: fault?.kind === 'foreign_location' ? this.foreignBaseUrl() : this.url,
      createOrRepeat: (token, body): CreateOutcome => {
        const fingerprint = canonicalJson(body ?? null);
        if (token !== undefined && fault?.kind !== 'different_job_id') {
          const existing = this.jobStore.byIdempotencyToken(token)[0];
          if (existing) {
            this.jobStore.advance(existing, nowMs);
            ctx.job = existing;
            return { kind: existing.fingerprint === fingerprint ? 'repeat' : 'conflict', job: existing };
          }
        }
        const created = this.jobStore.create({
          id: this.dialectImpl.newJobId(this.random.hex(32)),
          token,
          fingerprint,
          payload: body,
          scriptName,
          script: scriptByName(this.scenario, scriptName),
          nowMs,
        });
        ctx.job = created;
        return { kind: 'created', job: created };
      },
      payloadOf: (j) => {
        const rendered = this.payloads.get(j.script);
        const advertised: Advertised = {
          contentType: rendered.contentType,
          sizeBytes: rendered.sizeBytes,
          sha256Hex: rendered.sha256Hex,
          sha256Base64: rendered.sha256Base64,
          recordCount: rendered.recordCount,
        };
        let served = rendered.bytes;
        if (fault?.kind === 'result_mismatch') {
          if (fault.field === 'checksum') {
            const wrong = createHash('sha256').update(rendered.bytes).update('mismatch').digest();
            advertised.sha256Hex = wrong.toString('hex');
            advertised.sha256Base64 = wrong.toString('base64');
          } else if (fault.field === 'count') {
            advertised.recordCount = (rendered.recordCount ?? 0) + 1;
          } else {
            served = Buffer.concat([rendered.bytes, Buffer.from('\n')]);
          }
        }
        return { served, rendered, advertised };
      },
    };
    return ctx;
  }

  private foreignBaseUrl(): string {
    return (this.options.foreignBaseUrl ?? this.scenario.foreignBaseUrl ?? 'http://foreign.invalid').replace(
      /\/+$/,
      '',
    );
  }

  private async readJson(req: IncomingMessage): Promise<unknown> {
    const length = req.headers['content-length'];
    if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) {
      req.resume();
      return undefined;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > this.maxBodyBytes) {
        req.resume();
        throw new BodyTooLarge();
      }
      chunks.push(chunk);
    }
    if (size === 0) return undefined;
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  }

  private finish(res: ServerResponse, record: RequestRecord, response: SimResponse): void {
    record.status = response.status;
    this.accounting.push(record);
    this.write(res, response, record.requestId);
  }

  private write(res: ServerResponse, response: SimResponse, requestId: string): void {
    if (res.destroyed) return;
    const headers: Record<string, string | number> = { ...response.headers, 'x-request-id': requestId };
    let bytes: Buffer | undefined;
    if (response.json !== undefined) {
      bytes = Buffer.from(JSON.stringify(response.json));
      headers['content-type'] = response.contentType ?? 'application/json';
    } else if (response.raw !== undefined) {
      bytes = response.raw;
      if (response.contentType) headers['content-type'] = response.contentType;
    }
    headers['content-length'] = bytes?.length ?? 0;
    res.writeHead(response.status, headers);
    res.end(bytes);
  }

  private malformed(
    res: ServerResponse,
    record: RequestRecord,
    response: SimResponse,
    fault: Extract<Fault, { kind: 'malformed' }>,
  ): void {
    const status = fault.status ?? response.status;
    record.status = status;
    this.accounting.push(record);
    switch (fault.body) {
      case 'non_json':
        return this.write(
          res,
          { status, raw: Buffer.from('this is not JSON {"state": '), contentType: 'application/json' },
          record.requestId,
        );
      case 'html':
        return this.write(
          res,
          {
            status,
            raw: Buffer.from(
              '<!DOCTYPE html><html><head><title>Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>',
            ),
            contentType: 'text/html; charset=utf-8',
          },
          record.requestId,
        );
      case 'missing_fields':
        return this.write(
          res,
          { status, headers: response.headers, json: withoutKeyFields(response.json ?? {}) },
          record.requestId,
        );
      case 'wrong_types':
        return this.write(
          res,
          { status, headers: response.headers, json: wrongTypes(response.json ?? {}) },
          record.requestId,
        );
      case 'huge':
        return streamHuge(res, status, fault.sizeBytes ?? 8 * 1024 * 1024, record.requestId);
    }
  }

  private truncated(res: ServerResponse, record: RequestRecord, response: SimResponse): void {
    record.status = response.status;
    this.accounting.push(record);
    const bytes = response.raw ?? Buffer.from(JSON.stringify(response.json ?? {}));
    res.writeHead(response.status, {
      ...response.headers,
      'x-request-id': record.requestId,
      'content-type': response.contentType ?? 'application/json',
      'content-length': bytes.length,
    });
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
  }

  private async handleSim(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    record: RequestRecord,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const json = (status: number, body: unknown): void => this.finish(res, record, { status, json: body });
    if (method === 'GET' && path === '/_sim/requests') {
      req.resume();
      const filter: RequestFilter = {};
      const action = query.get('action');
      if (action) filter.action = action as RequestFilter['action'];
      const jobId = query.get('jobId');
      if (jobId) filter.jobId = jobId;
      const key = query.get('idempotencyKey');
      if (key) filter.idempotencyKey = key;
      const since = query.get('sinceSeq');
      if (since) filter.sinceSeq = Number(since);
      // Listed before this request is recorded, so the answer does not contain itself.
      return json(200, { requests: this.accounting.list(filter), dropped: this.accounting.dropped() });
    }
    if (method === 'GET' && path === '/_sim/jobs') {
      req.resume();
      return json(200, { jobs: this.jobs() });
    }
    if (method === 'GET' && path === '/_sim/webhooks') {
      req.resume();
      return json(200, { deliveries: this.webhooks.deliveries() });
    }
    if (method === 'POST' && path === '/_sim/reset') {
      req.resume();
      this.reset();
      return json(200, { reset: true });
    }
    if (method === 'POST' && path === '/_sim/scenario') {
      const chunks: Buffer[] = [];
      for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const ct = req.headers['content-type'] ?? '';
        const scenario = parseScenarioText(
          text,
          '(POST /_sim/scenario)',
          ct.includes('yaml') ? 'yaml' : ct.includes('json') ? 'json' : undefined,
        );
        this.setScenario(scenario);
        return json(200, { dialect: this.dialect, scripts: Object.keys(scenario.scripts) });
      } catch (err) {
        if (err instanceof ScenarioError) return json(400, { error: { code: err.code, issues: err.issues } });
        throw err;
      }
    }
    req.resume();
    return json(404, { error: { code: 'not_found', message: `no simulator endpoint ${method} ${path}` } });
  }
}

function httpError(fault: Extract<Fault, { kind: 'http_error' }>, nowMs: number): SimResponse {
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  else if (fault.retryAfterDateInSeconds !== undefined)
    headers['retry-after'] = new Date(nowMs + fault.retryAfterDateInSeconds * 1000).toUTCString();
  else if (fault.retryAfterRaw !== undefined) headers['retry-after'] = fault.retryAfterRaw;
  const codes: Record<number, string> = {
    401: 'unauthenticated',
    403: 'permission_denied',
    404: 'not_found',
    429: 'rate_limited',
    500: 'internal',
    502: 'bad_gateway',
    503: 'unavailable',
    504: 'gateway_timeout',
  };
  return {
    status: fault.status,
    headers,
    json: { error: { code: codes[fault.status] ?? 'error', message: `simulated ${fault.status}` } },
  };
}

const KEY_FIELDS = new Set(['state', 'status', 'done', 'job_id', 'id', 'name', 'metadata', 'status_url']);

function withoutKeyFields(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([k]) => !KEY_FIELDS.has(k)));
}

function wrongTypes(value: unknown): unknown {
  if (typeof value === 'string') return 12345;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return { not: 'an array' };
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wrongTypes(v)]));
  return 'null';
}

function streamHuge(res: ServerResponse, status: number, sizeBytes: number, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  let sent = 0;
  const head = Buffer.from('{"padding":"');
  res.write(head);
  sent += head.length;
  const pump = (): void => {
    while (sent < sizeBytes) {
      if (res.destroyed) return;
      const n = Math.min(chunk.length, sizeBytes - sent);
      sent += n;
      if (!res.write(chunk.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

/**
 * Starts a simulator and resolves once it listens. Throws SimulatorOptionsError or ScenarioError for bad options.
 */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const sim = new SimulatorServer(options);
  await sim.listen();
  return sim;
}
