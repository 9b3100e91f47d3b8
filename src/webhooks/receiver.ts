/**
 * The webhook receiver (W1): `POST /webhooks/<provider>`. It verifies the signature as the provider's contract
 * says (timestamped HMAC, constant-time), reads the event, maps the provider job ID to its operation through the
 * store, records the event durably (unique by provider and event ID: a replay is a duplicate with no effect),
 * and only then answers 2xx and signals the workflow. A webhook is a hint: the workflow confirms it with a
 * status read before anything is declared (W1); a lost signal costs only latency.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readField } from '../adapters/providers/field-path';
import { AsyncJobError, hasCode } from '../core/errors';
import type { OperationStore } from '../adapters/store/operation-store';
import type { WebhookHint } from '../workflows/messages';
import { wakeStatusLoops } from '../activities/loop-wake';
import { verifyWebhookSignature } from './signature';

/** How a provider signs its webhooks, as its contract states (secret by reference, T4). */
export interface WebhookSettings {
  signatureHeader: string;
  scheme: 'hmac-sha256-timestamped';
  secret: { secretEnv?: string; secretFile?: string };
  toleranceMs: number;
  eventIdField: string;
  jobIdField: string;
  stateField: string;
}

/** What the receiver needs. */
export interface WebhookReceiverOptions {
  port?: number;
  host?: string;
  store: Pick<OperationStore, 'recordWebhookEvent' | 'findByProviderJobId'>;
  /** The webhook settings of a provider, or undefined when it has none. */
  webhookSettings(provider: string): WebhookSettings | undefined;
  /** Delivers the hint to the operation's workflow. */
  signal(operationId: string, hint: WebhookHint): Promise<void>;
  clock?: () => number;
  env?: NodeJS.ProcessEnv;
  /** Larger bodies are refused with 413 before they are read whole. */
  maxBodyBytes?: number;
  /** Called once per request with its outcome, for logs and metrics (no secrets, no bodies). */
  onOutcome?: (outcome: WebhookOutcome) => void;
}

/** What happened to one webhook request. */
export interface WebhookOutcome {
  provider: string;
  status: number;
  result: 'recorded' | 'duplicate' | 'unknown_job' | 'refused' | 'error';
  reason?: string;
  eventId?: string;
  operationId?: string;
  signalled?: boolean;
}

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > maxBytes) throw new AsyncJobError('ASYNCJOB_ERR_BODY_TOO_LARGE', `over ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new AsyncJobError('ASYNCJOB_ERR_BODY_TOO_LARGE', `over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A field of the event by the contract's field path (`data.job.id`, `items[0].id`): the adapters' one reader. */
function field(body: unknown, fieldPath: string): unknown {
  const read = readField(body, fieldPath);
  return read.found ? read.value : undefined;
}

async function resolveSecret(settings: WebhookSettings, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (settings.secret.secretEnv) return env[settings.secret.secretEnv] || undefined;
  if (settings.secret.secretFile)
    return (await readFile(settings.secret.secretFile, 'utf8').catch(() => '')).trim() || undefined;
  return undefined;
}

/** What the receiver answers to one request, and the outcome it reports. */
interface Answer {
  status: number;
  body: Record<string, unknown>;
  outcome: WebhookOutcome;
}

/** The receiver's options with their defaults applied. */
interface ReceiverContext {
  options: WebhookReceiverOptions;
  clock: () => number;
  env: NodeJS.ProcessEnv;
  maxBodyBytes: number;
}

/** An event that passed the signature check and parses as JSON, with what the contract says to read from it. */
interface VerifiedEvent {
  provider: string;
  settings: WebhookSettings;
  raw: Buffer;
  event: unknown;
}

function isEventId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 500;
}

/**
 * Records the verified event durably (a replay is a `duplicate` with no effect), and only then signals the
 * operation that follows the provider job, if exactly one does. A failed signal costs only latency (W1).
 */
async function recordAndSignal(verified: VerifiedEvent, context: ReceiverContext): Promise<Answer> {
  const { provider, settings, raw, event } = verified;
  const refuse = (reason: string, extra: Partial<WebhookOutcome> = {}): Answer => ({
    status: 400,
    body: { error: reason },
    outcome: { provider, status: 400, result: 'refused', reason, ...extra },
  });
  const eventId = field(event, settings.eventIdField);
  const jobId = field(event, settings.jobIdField);
  const state = field(event, settings.stateField);
  if (!isEventId(eventId)) return refuse(`missing_or_invalid_${settings.eventIdField}`);
  if (!isEventId(jobId)) return refuse(`missing_or_invalid_${settings.jobIdField}`, { eventId });
  const { store } = context.options;
  const operations = await store.findByProviderJobId(provider, jobId);
  const operationId = operations.length === 1 ? operations[0] : undefined;
  const receivedAt = new Date(context.clock()).toISOString();
  const recorded = await store.recordWebhookEvent({
    provider,
    eventId,
    receivedAt,
    ...(operationId !== undefined ? { operationId } : {}),
    ...(typeof state === 'string' ? { eventType: state.slice(0, 200) } : {}),
    payloadSha256: createHash('sha256').update(raw).digest('hex'),
  });
  if (recorded === 'duplicate')
    return {
      status: 200,
      body: { status: 'duplicate' },
      outcome: { provider, status: 200, result: 'duplicate', eventId },
    };
  if (operationId === undefined) {
    // Recorded for the audit; no operation follows this job (yet): the status loop covers it.
    return {
      status: 202,
      body: { status: 'recorded', operation: null },
      outcome: { provider, status: 202, result: 'unknown_job', eventId },
    };
  }
  // A status loop of this operation in this process reads at once (activities/loop-wake.ts); the signal follows.
  wakeStatusLoops(operationId, 'webhook');
  let signalled = true;
  try {
    const occurredAt = field(event, 'occurred_at');
    await context.options.signal(operationId, {
      eventId,
      remoteJobId: jobId,
      ...(typeof state === 'string' ? { state: state.slice(0, 500) } : {}),
      ...(typeof occurredAt === 'string' ? { occurredAt: occurredAt.slice(0, 100) } : {}),
      receivedAt,
    });
  } catch {
    signalled = false;
  }
  return {
    status: 200,
    body: { status: 'recorded', operation: operationId, signalled },
    outcome: { provider, status: 200, result: 'recorded', eventId, operationId, signalled },
  };
}

/** One request: the route, the size limit, the provider's signature, then {@link recordAndSignal}. */
async function handleWebhook(req: http.IncomingMessage, context: ReceiverContext): Promise<Answer> {
  const match = /^\/webhooks\/((?!\.)[A-Za-z0-9._-]{1,64})$/.exec(new URL(req.url ?? '/', 'http://receiver').pathname);
  const provider = match?.[1] ?? '';
  const refuse = (status: number, reason: string): Answer => ({
    status,
    body: { error: reason },
    outcome: { provider, status, result: 'refused', reason },
  });
  if (req.method !== 'POST') return refuse(405, 'method_not_allowed');
  if (!match) return refuse(404, 'unknown_route');
  const settings = context.options.webhookSettings(provider);
  if (!settings) return refuse(404, 'provider_has_no_webhooks');
  let raw: Buffer;
  try {
    raw = await readBody(req, context.maxBodyBytes);
  } catch (err) {
    if (hasCode(err, 'ASYNCJOB_ERR_BODY_TOO_LARGE')) return refuse(413, 'body_too_large');
    throw err;
  }
  const secret = await resolveSecret(settings, context.env);
  if (!secret)
    return {
      status: 500,
      body: { error: 'webhook_secret_unavailable' },
      outcome: { provider, status: 500, result: 'error', reason: 'webhook_secret_unavailable' },
    };
  const header = req.headers[settings.signatureHeader.toLowerCase()];
  const check = verifyWebhookSignature({
    header: Array.isArray(header) ? header[0] : header,
    rawBody: raw,
    secret,
    nowMs: context.clock(),
    toleranceMs: settings.toleranceMs,
  });
  if (check.kind === 'refused') return refuse(401, check.reason);
  let event: unknown;
  try {
    event = JSON.parse(raw.toString('utf8'));
  } catch {
    return refuse(400, 'body_not_json');
  }
  return recordAndSignal({ provider, settings, raw, event }, context);
}

/** The answer to a request whose handling failed on our side (the store, say): never its details. */
function internalError(): Answer {
  return {
    status: 500,
    body: { error: 'internal_error' },
    outcome: { provider: '', status: 500, result: 'error', reason: 'internal_error' },
  };
}

/** Starts the receiver on `host:port` (127.0.0.1 and a free port by default). */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const context: ReceiverContext = {
    options,
    clock: options.clock ?? Date.now,
    env: options.env ?? process.env,
    maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
  };
  const server = http.createServer((req, res) => {
    handleWebhook(req, context)
      .catch(internalError)
      .then(({ status, body, outcome }) => {
        options.onOutcome?.(outcome);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
