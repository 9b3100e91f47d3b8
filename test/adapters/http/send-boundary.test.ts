/**
 * U1: the at-most-once boundary, pinned against real sockets. The client must tell "certainly not sent" (safe to
 * send again) from "sent, answer lost or ambiguous" (never sent again without reconciliation). That rests on when
 * undici calls the handler's `onRequestStart`: on a connected socket, before the first byte of the request is
 * written, and never for a connection that did not open. Each case records the order of what happened on both
 * sides (the client's send instant, `HttpRequest.onWritten`; the server's receipt of the request), so an undici
 * upgrade that moved that callback earlier (a refused connection would look sent) or later (a request the server
 * already read would look unsent) fails here instead of breaking at-most-once silently.
 */
import { type Socket } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  REQUEST_WRITTEN_CHANNEL,
  createHttpClient,
  type HttpClient,
  type HttpClientOptions,
  type HttpExchange,
  type RequestWrittenMessage,
} from '../../../src/adapters/http';
import { closedPort, readRequestHead, startNetServer, type Loopback } from './loopback';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** What happened, in order, on both sides of one exchange. */
type Event = 'client:written' | 'server:connection' | 'server:request-head' | 'server:request-line';

interface Trace {
  events: Event[];
  /** Bytes the server received, latin1. */
  received: string;
}

function newTrace(): Trace {
  return { events: [], received: '' };
}

/** A raw server: records its side into `trace`, then behaves as `behave` says with each connection. */
async function rawServer(trace: Trace, behave: (socket: Socket) => void): Promise<Loopback> {
  const server = await startNetServer((socket) => {
    trace.events.push('server:connection');
    socket.on('data', (chunk: Buffer) => {
      trace.received += chunk.toString('latin1');
      if (/^[A-Z]+ \/\S* HTTP\/1\.1\r\n/.test(trace.received) && !trace.events.includes('server:request-line'))
        trace.events.push('server:request-line');
    });
    void readRequestHead(socket).then(() => trace.events.push('server:request-head'));
    behave(socket);
  });
  cleanups.push(() => server.close());
  return server;
}

async function send(trace: Trace, options: Partial<HttpClientOptions> & { allowedOrigin: string }, body?: Buffer) {
  const client: HttpClient = createHttpClient({
    connectTimeoutMs: 300,
    headersTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
    ...options,
  });
  cleanups.push(() => client.close());
  const written: number[] = [];
  const exchange: HttpExchange = await client.send({
    method: 'POST',
    url: '/jobs',
    traceId: 'boundary',
    ...(body === undefined ? { json: { report: 'monthly' } } : { body }),
    onWritten: (atMs) => {
      written.push(atMs);
      trace.events.push('client:written');
    },
  });
  return { exchange, written };
}

/** The client's send instant came before the server saw the request line: the boundary is at the first byte. */
function expectWrittenBeforeReceipt(trace: Trace, written: number[]): void {
  expect(written).toHaveLength(1);
  expect(trace.events.filter((e) => e === 'client:written')).toHaveLength(1);
  expect(trace.events.indexOf('client:written')).toBeLessThan(trace.events.indexOf('server:request-line'));
}

describe('U1: certainly not sent (safe to send again): the connection never opened, onRequestStart never fired', () => {
  it('U1: a refused connection is not_sent connect_refused, and the request was never written', async () => {
    const trace = newTrace();
    const port = await closedPort();
    const { exchange, written } = await send(trace, { allowedOrigin: `http://127.0.0.1:${port}` });
    expect(exchange).toMatchObject({ outcome: 'not_sent', errorCategory: 'connect_refused', bodyBytes: 0 });
    expect(written).toEqual([]);
  });

  it('U1: a host name that does not resolve is not_sent, and the request was never written', async () => {
    const trace = newTrace();
    const { exchange, written } = await send(trace, { allowedOrigin: 'http://asyncjob-boundary.invalid' });
    expect(exchange.outcome).toBe('not_sent');
    expect(['dns', 'connect_timeout']).toContain(exchange.errorCategory);
    expect(written).toEqual([]);
  });

  it('U1: a TLS handshake the server never answers is not_sent connect_timeout; the server got no HTTP request', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, () => undefined);
    const { exchange, written } = await send(trace, {
      allowedOrigin: `https://127.0.0.1:${server.port}`,
      connectTimeoutMs: 200,
    });
    expect(exchange).toMatchObject({ outcome: 'not_sent', errorCategory: 'connect_timeout' });
    expect(written).toEqual([]);
    expect(trace.events).toEqual(['server:connection']);
    expect(trace.received.length).toBeGreaterThan(0); // the ClientHello, and nothing of the request
    expect(trace.received).not.toContain('/jobs');
  });

  it('U1: a failed TLS handshake is not_sent tls; the server got no HTTP request', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'));
    });
    const { exchange, written } = await send(trace, { allowedOrigin: `https://127.0.0.1:${server.port}` });
    expect(exchange).toMatchObject({ outcome: 'not_sent', errorCategory: 'tls' });
    expect(written).toEqual([]);
    expect(trace.received).not.toContain('/jobs');
  });

  it('U1: a connection reset during the TLS handshake is not_sent; the server got no HTTP request', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => socket.once('data', () => socket.resetAndDestroy()));
    const { exchange, written } = await send(trace, { allowedOrigin: `https://127.0.0.1:${server.port}` });
    expect(exchange.outcome).toBe('not_sent');
    expect(['connect_reset', 'tls']).toContain(exchange.errorCategory);
    expect(written).toEqual([]);
    expect(trace.received).not.toContain('/jobs');
  });
});

describe('U1: a write refused at its instant (a send slot passed) is certainly not sent', () => {
  it('U1: onWritten returning false sends no byte of the request: not_sent send_window_missed; the next send goes out', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => {
      void readRequestHead(socket).then(() => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    });
    const client = createHttpClient({ allowedOrigin: server.origin, connectTimeoutMs: 300, headersTimeoutMs: 2_000 });
    cleanups.push(() => client.close());
    const offered: number[] = [];
    const refused = await client.send({
      method: 'POST',
      url: '/jobs',
      traceId: 'boundary',
      json: { report: 'monthly' },
      onWritten: (atMs) => {
        offered.push(atMs);
        return false;
      },
    });
    expect(refused).toMatchObject({ outcome: 'not_sent', errorCategory: 'send_window_missed', bodyBytes: 0 });
    expect(offered).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(trace.received).not.toContain('/jobs');
    const sent = await client.send({ method: 'POST', url: '/jobs', traceId: 'boundary', onWritten: () => true });
    expect(sent).toMatchObject({ outcome: 'response', status: 200 });
    expect(trace.received).toContain('POST /jobs HTTP/1.1');
  });
});

describe('U1: sent (never send again without reconciliation): written before the server read a byte of it', () => {
  it('U1: the server reads the request, then closes the connection: ambiguous reset_after_send, no status', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => void readRequestHead(socket).then(() => socket.destroy()));
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin });
    expect(exchange).toMatchObject({ outcome: 'ambiguous', errorCategory: 'reset_after_send', bodyBytes: 0 });
    expect(exchange.status).toBeUndefined();
    expectWrittenBeforeReceipt(trace, written);
  });

  it('U1: the server reads the request, then resets the connection (RST): ambiguous reset_after_send', async () => {
    const trace = newTrace();
    const server = await rawServer(
      trace,
      (socket) => void readRequestHead(socket).then(() => socket.resetAndDestroy()),
    );
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin });
    expect(exchange).toMatchObject({ outcome: 'ambiguous', errorCategory: 'reset_after_send' });
    expectWrittenBeforeReceipt(trace, written);
  });

  it('U1: the server reads the request and never answers: ambiguous timeout_after_send', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, () => undefined);
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin, headersTimeoutMs: 150 });
    expect(exchange).toMatchObject({ outcome: 'ambiguous', errorCategory: 'timeout_after_send' });
    expect(trace.events).toContain('server:request-head');
    expectWrittenBeforeReceipt(trace, written);
  });

  it('U1: the server reads the head and closes while the body is still being written: ambiguous', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => void readRequestHead(socket).then(() => socket.destroy()));
    const body = Buffer.alloc(8 * 1024 * 1024, 0x61);
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin }, body);
    expect(exchange.outcome).toBe('ambiguous');
    expect(['reset_after_send', 'transport_error_after_send']).toContain(exchange.errorCategory);
    expect(trace.received.length).toBeLessThan(body.length);
    expectWrittenBeforeReceipt(trace, written);
  });

  it('U1: the server answers half a body, then resets: ambiguous truncated, keeping the status', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => {
      void readRequestHead(socket).then(() => {
        socket.write('HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":"j');
        setImmediate(() => socket.resetAndDestroy());
      });
    });
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin });
    expect(exchange).toMatchObject({ outcome: 'ambiguous', errorCategory: 'truncated', status: 202 });
    expect(exchange.bodyBytes).toBeGreaterThan(0);
    expectWrittenBeforeReceipt(trace, written);
  });

  it('U1: the server answers half a body and goes silent: ambiguous body_timeout, keeping the status', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => {
      void readRequestHead(socket).then(() =>
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":"j'),
      );
    });
    const { exchange, written } = await send(trace, { allowedOrigin: server.origin, bodyTimeoutMs: 150 });
    expect(exchange).toMatchObject({ outcome: 'ambiguous', errorCategory: 'body_timeout', status: 200 });
    expectWrittenBeforeReceipt(trace, written);
  });
});

describe('the send instant, published', () => {
  it('the send instant is published on the request-written channel, once per request written, with no path or secret', async () => {
    const trace = newTrace();
    const server = await rawServer(trace, (socket) => {
      void readRequestHead(socket).then(() => socket.end('HTTP/1.1 204 No Content\r\n\r\n'));
    });
    const published: RequestWrittenMessage[] = [];
    const listener = (message: unknown): void => void published.push(message as RequestWrittenMessage);
    subscribe(REQUEST_WRITTEN_CHANNEL, listener);
    try {
      const { exchange, written } = await send(trace, { allowedOrigin: server.origin });
      expect(exchange).toMatchObject({ outcome: 'response', status: 204 });
      expect(published).toEqual([{ origin: server.origin, method: 'POST', writtenAtMs: written[0] }]);
      const port = await closedPort();
      await send(trace, { allowedOrigin: `http://127.0.0.1:${port}` });
      expect(published).toHaveLength(1);
    } finally {
      unsubscribe(REQUEST_WRITTEN_CHANNEL, listener);
    }
  });
});
