/**
 * A download whose server closes the connection right after the body (`Connection: close`, a chunked body, or a
 * body delimited by the close itself) while the sink is still busy: the client must neither crash the process
 * (undici asserts its parser is not paused when the socket ends) nor lose or duplicate a byte.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../../src/adapters/http';
import { startHttpServer, startNetServer, readRequestHead, type Loopback } from './loopback';

const payload = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 253));
const sha = createHash('sha256').update(payload).digest('hex');
const opened: Loopback[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

/** A sink that takes its time over every chunk, so the server's close arrives while a write is pending. */
function slowSink(received: Buffer[]) {
  return async (chunk: Uint8Array) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    received.push(Buffer.from(chunk));
  };
}

async function downloadFrom(server: Loopback) {
  opened.push(server);
  const received: Buffer[] = [];
  const client = createHttpClient({ allowedOrigin: server.origin });
  try {
    const exchange = await client.download({ method: 'GET', url: '/result', traceId: 't' }, slowSink(received));
    return { exchange, body: Buffer.concat(received) };
  } finally {
    await client.close();
  }
}

describe('download: the server closes the connection after the body (R2)', () => {
  it('R2: a chunked body with Connection: close reaches the sink whole', async () => {
    const { exchange, body } = await downloadFrom(
      await startHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', connection: 'close' });
        for (let at = 0; at < payload.length; at += 16_384) res.write(payload.subarray(at, at + 16_384));
        res.end();
      }),
    );
    expect(exchange.outcome).toBe('response');
    expect(exchange.download).toMatchObject({ sizeBytes: payload.length, sha256: sha, complete: true });
    expect(body.equals(payload)).toBe(true);
  });

  it('R2: a Content-Length body with Connection: close reaches the sink whole', async () => {
    const { exchange, body } = await downloadFrom(
      await startHttpServer((_req, res) => {
        res.writeHead(200, { 'content-length': String(payload.length), connection: 'close' });
        res.end(payload);
      }),
    );
    expect(exchange.download).toMatchObject({ sizeBytes: payload.length, sha256: sha, complete: true });
    expect(body.equals(payload)).toBe(true);
  });

  it('R2: an HTTP/1.0 body delimited by the close reaches the sink whole', async () => {
    const { exchange, body } = await downloadFrom(
      await startNetServer((socket) => {
        void readRequestHead(socket).then(() => {
          socket.write('HTTP/1.0 200 OK\r\ncontent-type: application/octet-stream\r\n\r\n');
          socket.end(payload);
        });
      }),
    );
    expect(exchange.outcome).toBe('response');
    expect(exchange.download).toMatchObject({ sizeBytes: payload.length, sha256: sha });
    expect(body.equals(payload)).toBe(true);
  });

  it('R2: a kept-alive body larger than the sink backlog pauses and resumes the socket and arrives whole', async () => {
    const large = Buffer.alloc(12 * 1024 * 1024, 7);
    const server = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(large.length) });
      res.end(large);
    });
    opened.push(server);
    let size = 0;
    const client = createHttpClient({ allowedOrigin: server.origin, maxDownloadBytes: 64 * 1024 * 1024 });
    try {
      const exchange = await client.download({ method: 'GET', url: '/result', traceId: 't' }, async (chunk) => {
        await new Promise((resolve) => setImmediate(resolve));
        size += chunk.length;
      });
      expect(exchange.download).toMatchObject({ sizeBytes: large.length, complete: true });
      expect(size).toBe(large.length);
    } finally {
      await client.close();
    }
  });
});
