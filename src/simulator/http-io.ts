/**
 * Reading request bodies and writing answers on node:http, for the simulator's handlers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AsyncJobError } from '../core/errors';
import type { SimResponse } from './dialects/types';

/**
 * Reads and parses a JSON request body. Undefined for an empty body; throws `ASYNCJOB_ERR_BODY_TOO_LARGE` past
 * `maxBodyBytes` (answered 413), and a SyntaxError for a body that is not JSON.
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
      throw new AsyncJobError('ASYNCJOB_ERR_BODY_TOO_LARGE', `over ${maxBodyBytes} bytes`);
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
