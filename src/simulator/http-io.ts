/**
 * Reading request bodies and writing answers on node:http, for the simulator's handlers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimResponse } from './dialects/types';

/** Thrown by {@link readJsonBody} when the body exceeds the configured limit (answered 413). */
export class BodyTooLarge extends Error {}

/**
 * Reads and parses a JSON request body. Undefined for an empty body; throws {@link BodyTooLarge} past
 * `maxBodyBytes`, and a SyntaxError for a body that is not JSON.
 */
export async function readJsonBody(req: IncomingMessage, maxBodyBytes: number): Promise<unknown> {
  const length = req.headers['content-length'];
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) {
      req.resume();
      throw new BodyTooLarge();
    }
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/** Reads a whole request body as UTF-8 text (the test endpoints only; no size limit). */
export async function readTextBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Writes an answer with its X-Request-Id and Content-Length; does nothing on a destroyed response. */
export function writeResponse(res: ServerResponse, response: SimResponse, requestId: string): void {
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
