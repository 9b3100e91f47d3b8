/**
 * The simulator's HTTP server (node:http): listening, connections, dispatch of each request to the reserved
 * test endpoints under `/_sim/` or to the provider endpoints of the active dialect, and the {@link Simulator}
 * handle over the instance's state.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RequestFilter, RequestRecord } from './accounting';
import {
  SimulatorOptionsError,
  type DeliverWebhookOptions,
  type JobSummary,
  type Simulator,
  type SimulatorOptions,
} from './api';
import { iso } from './dialects/types';
import { openExchange } from './exchange';
import { writeResponse } from './http-io';
import type { SimJob } from './jobs';
import { handleProviderRequest } from './provider-request';
import type { DialectName, ScenarioInput } from './scenario';
import { handleSimEndpoint } from './sim-endpoints';
import { SimulatorState } from './state';
import type { WebhookDeliveryRecord } from './webhooks';

export { SimulatorOptionsError } from './api';
export type { DeliverWebhookOptions, JobSummary, Simulator, SimulatorOptions } from './api';

class SimulatorServer implements Simulator {
  url = '';
  port = 0;
  private readonly state: SimulatorState;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly options: SimulatorOptions) {
    this.state = new SimulatorState(options);
    this.server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) {
          const message = err instanceof Error ? err.message : String(err);
          writeResponse(res, { status: 500, json: { error: { code: 'simulator_error', message } } }, 'sim');
        }
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get dialect(): DialectName {
    return this.state.dialect.name;
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
    this.state.url = this.url;
  }

  async stop(): Promise<void> {
    this.state.announcer.clear();
    // Requests held by a `delay` fault are released at once (their sockets are destroyed below).
    this.state.delays.releaseAll();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([closed, this.state.webhooks.stop()]);
  }

  reset(): void {
    // Two simulators with the same seed still produce the same IDs: the random stream is kept.
    this.state.clear();
  }

  setScenario(input: ScenarioInput): void {
    this.state.install(input);
  }

  requests(filter?: RequestFilter): RequestRecord[] {
    return this.state.accounting.list(filter);
  }

  jobs(): JobSummary[] {
    return this.state.jobs.all().map((job) => this.summary(job));
  }

  job(jobId: string): JobSummary | undefined {
    const job = this.state.findJob(jobId);
    return job ? this.summary(job) : undefined;
  }

  heldRequests(): number {
    return this.state.delays.size;
  }

  jobsByToken(token: string): JobSummary[] {
    return this.state.jobs.byIdempotencyToken(token).map((job) => this.summary(job));
  }

  createdJobCount(): number {
    return this.state.jobs.count();
  }

  webhookDeliveries(): WebhookDeliveryRecord[] {
    return this.state.webhooks.deliveries();
  }

  issuedSessions(jobId: string): string[] {
    const job = this.state.findJob(jobId);
    return job === undefined ? [] : this.state.sessions.issuedFor(job.id);
  }

  async deliverWebhook(jobId: string, options: DeliverWebhookOptions = {}): Promise<WebhookDeliveryRecord> {
    const job = this.state.findJob(jobId);
    if (!job) throw new SimulatorOptionsError(`jobId: no job "${jobId}"`);
    const now = this.state.clock();
    const state = options.state ?? this.state.jobs.advance(job, now);
    return this.state.webhooks.deliver(
      {
        event_id: options.eventId ?? `evt_${job.id}_manual_${now}`,
        job_id: job.id,
        state: this.state.dialect.publicState(state),
        occurred_at: iso(now),
      },
      { signedCorrectly: options.signedCorrectly, delayMs: options.delayMs },
    );
  }

  private summary(job: SimJob): JobSummary {
    const state = this.state.jobs.advance(job, this.state.clock());
    return {
      jobId: this.state.dialect.publicJobId(job.id),
      rawId: job.id,
      idempotencyKey: job.token,
      clientReference: job.clientReference,
      scriptName: job.scriptName,
      state,
      createdAt: iso(job.createdAtMs),
      statusReads: job.statusReads,
      cancelRequested: job.cancel !== undefined,
      history: job.history.map((entry) => ({ state: entry.state, at: iso(entry.atMs) })),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { state } = this;
    const exchange = openExchange(req, res, {
      accounting: state.accounting,
      clock: state.clock,
      bearer: state.bearer,
      recordHeaders: state.scenario.recordHeaders,
    });
    if (exchange.record.path.startsWith('/_sim/'))
      return handleSimEndpoint({ simulator: this, accounting: state.accounting }, exchange);
    return handleProviderRequest(state, exchange);
  }
}

/**
 * Starts a simulator and resolves once it listens. Throws SimulatorOptionsError or ScenarioError for bad options.
 */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const sim = new SimulatorServer(options);
  await sim.listen();
  return sim;
}
