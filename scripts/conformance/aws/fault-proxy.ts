/**
 * A small loopback proxy in front of moto that plays what moto never does by itself: AWS's throttling answer,
 * and a create whose answer is lost after moto processed it. One proxy per scenario, so each scenario's adapter
 * points at its own faults. Requests are forwarded byte for byte with their own `Host` header: asyncjob signs for
 * the proxy's host, and moto checks the signature against the same header, so every forwarded request is still
 * verified by moto. Answers are forwarded as moto gave them, but for their Content-Type, set to the label AWS sends
 * (see {@link relabel}).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/** The faults of one scenario, keyed by `X-Amz-Target` (e.g. `Transcribe.StartTranscriptionJob`). */
export interface FaultPlan {
  /**
   * How many requests of each target are answered, without reaching moto, with AWS's throttling answer:
   * 400 `{"__type":"ThrottlingException","message":"Rate exceeded"}`.
   */
  throttle?: Record<string, number>;
  /** How many requests of each target reach moto and are processed, but whose answer is never delivered. */
  dropAnswer?: Record<string, number>;
}

/** What the proxy did with one request. */
export interface ProxiedRequest {
  target: string;
  /** The request carried an `Authorization: AWS4-HMAC-SHA256 ...` header. */
  signed: boolean;
  /** `forwarded` (with moto's status), `throttled` (never reached moto) or `dropped` (moto's answer withheld). */
  fate: 'forwarded' | 'throttled' | 'dropped';
  /** moto's HTTP status (absent when throttled). */
  status?: number;
  /** moto's error code when it refused the request's signature or key (`SignatureDoesNotMatch`...). */
  refusal?: string;
}

/** A running proxy. */
export interface FaultProxy {
  url: string;
  /** Every request seen, in order. */
  requests: ProxiedRequest[];
  /** Stops listening and closes open connections. Safe to repeat. */
  stop(): Promise<void>;
}

/** AWS's throttling answer, as the JSON protocol sends it. */
export const THROTTLING_ANSWER = { __type: 'ThrottlingException', message: 'Rate exceeded' };

const readBody = (stream: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });

function forward(
  upstream: URL,
  incoming: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        // The headers as signed, Host included: moto recomputes the signature over them.
        headers: incoming.headers,
      },
      (answer) => {
        readBody(answer).then(
          (answerBody) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: answerBody }),
          reject,
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * AWS labels every JSON-protocol answer with the protocol's media type (`application/x-amz-json-1.1`); moto labels
 * its successes `text`, `text/html; charset=utf-8` or `application/json`. The label AWS would send, for an answer
 * to a JSON-protocol request that moto labels otherwise; undefined to keep moto's. Only the label changes.
 */
function relabel(requestType: string | undefined, answerType: string | string[] | undefined): string | undefined {
  const protocol = /^application\/x-amz-json-1\.[01]$/.exec((requestType ?? '').split(';')[0]!.trim())?.[0];
  if (protocol === undefined || answerType === protocol) return undefined;
  return protocol;
}

/** Takes one from a target's remaining count; answers whether one was left. */
function take(counts: Map<string, number>, target: string): boolean {
  const left = counts.get(target) ?? 0;
  if (left <= 0) return false;
  counts.set(target, left - 1);
  return true;
}

/** Starts a proxy on a free loopback port forwarding to `upstreamUrl` with the faults of `plan`. */
export async function startFaultProxy(upstreamUrl: string, plan: FaultPlan = {}): Promise<FaultProxy> {
  const upstream = new URL(upstreamUrl);
  const throttles = new Map(Object.entries(plan.throttle ?? {}));
  const drops = new Map(Object.entries(plan.dropAnswer ?? {}));
  const requests: ProxiedRequest[] = [];
  const handle = async (incoming: IncomingMessage, reply: ServerResponse): Promise<void> => {
    const body = await readBody(incoming);
    const target = String(incoming.headers['x-amz-target'] ?? '');
    const signed = String(incoming.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ');
    if (take(throttles, target)) {
      requests.push({ target, signed, fate: 'throttled' });
      const text = JSON.stringify(THROTTLING_ANSWER);
      reply.writeHead(400, {
        'content-type': 'application/x-amz-json-1.1',
        'content-length': Buffer.byteLength(text),
        'x-amzn-requestid': `throttled-${requests.length}`,
      });
      reply.end(text);
      return;
    }
    const answer = await forward(upstream, incoming, body);
    if (take(drops, target)) {
      requests.push({ target, signed, fate: 'dropped', status: answer.status });
      // moto has processed the request; the caller never learns what it answered.
      incoming.socket.destroy();
      return;
    }
    const refusal = answer.status === 403 ? /<Code>([^<]+)<\/Code>/.exec(answer.body.toString('utf8'))?.[1] : undefined;
    requests.push({ target, signed, fate: 'forwarded', status: answer.status, ...(refusal ? { refusal } : {}) });
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    const label = relabel(incoming.headers['content-type'], headers['content-type']);
    if (label !== undefined) headers['content-type'] = label;
    headers['content-length'] = String(answer.body.length);
    reply.writeHead(answer.status, headers);
    reply.end(answer.body);
  };
  const server = createServer((incoming, reply) => {
    handle(incoming, reply).catch((error: unknown) => {
      if (!reply.headersSent) reply.writeHead(502, { 'content-type': 'text/plain' });
      reply.end(`fault proxy: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
