/**
 * Real loopback servers for the HTTP layer tests: an node:http server that records every request it saw,
 * and a raw node:net server for socket-level misbehaviour (reset after reading, truncated bodies), each closed
 * after its test by {@link loopbackPerTest}.
 */
import http from 'node:http';
import net from 'node:net';
import { type AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** A request as the server saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A started server. */
export interface Loopback {
  origin: string;
  port: number;
  seen: SeenRequest[];
  /** Raw connections accepted (net servers) or sockets opened (http servers). */
  connections: number;
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1 with `handler`, recording requests (the body is read before the handler runs). */
export async function startHttpServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest) => void,
): Promise<Loopback> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(parts).toString('utf8'),
      };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  const state = { connections: 0 };
  server.on('connection', (s: net.Socket) => {
    state.connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    seen,
    get connections() {
      return state.connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Starts a raw TCP server on 127.0.0.1; `onConnection` gets each socket. */
export async function startNetServer(onConnection: (socket: net.Socket) => void): Promise<Loopback> {
  const sockets = new Set<net.Socket>();
  const state = { connections: 0 };
  const server = net.createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    seen: [],
    get connections() {
      return state.connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves with a port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves when the raw socket has received a full request head (up to the blank line). */
export function readRequestHead(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let buf = '';
    const onData = (c: Buffer): void => {
      buf += c.toString('latin1');
      if (buf.includes('\r\n\r\n')) {
        socket.off('data', onData);
        resolve(buf);
      }
    };
    socket.on('data', onData);
  });
}

/**
 * Closes after each test of the calling file what that test opened, last opened first. `closeLater` registers a
 * closer (a client, a simulator); `server` and `netServer` start a loopback server registered so.
 */
export function loopbackPerTest(): {
  closeLater(close: () => Promise<void>): void;
  server(...args: Parameters<typeof startHttpServer>): Promise<Loopback>;
  netServer(...args: Parameters<typeof startNetServer>): Promise<Loopback>;
} {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length > 0) await closers.pop()!();
  });
  const closeLater = (close: () => Promise<void>): void => {
    closers.push(close);
  };
  const registered = async (started: Promise<Loopback>): Promise<Loopback> => {
    const loopback = await started;
    closeLater(() => loopback.close());
    return loopback;
  };
  return {
    closeLater,
    server: (...args) => registered(startHttpServer(...args)),
    netServer: (...args) => registered(startNetServer(...args)),
  };
}
