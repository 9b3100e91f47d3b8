/**
 * Helpers for the simulator tests: plain undici calls with the bearer token, and a polling loop.
 */
import { request } from 'undici';

export const TOKEN = 'sim-test-token-0123456789';
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  bytes: Buffer;
  json: unknown;
}

/** Sends one request and reads the whole answer. */
export async function call(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    auth?: boolean;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.auth === false ? {} : AUTH), ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await request(url, {
    method: (options.method ?? 'GET') as 'GET',
    headers,
    body,
    signal: options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, bytes, json };
}

/** Calls `read` until `done` says so (bounded), with a short pause between reads. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  maxReads = 200,
  pauseMs = 10,
): Promise<T> {
  let last = await read();
  for (let i = 0; i < maxReads && !done(last); i++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    last = await read();
  }
  return last;
}

/** Narrows an unknown JSON value to a record. */
export function obj(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object') throw new Error(`not an object: ${JSON.stringify(value)}`);
  return value as Record<string, unknown>;
}
