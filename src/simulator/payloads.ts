/**
 * Result payloads: the bytes served by the result endpoint with their integrity data (content type, size,
 * SHA-256, record count), computed once per script and cached so serving a result costs no hashing.
 */
import { createHash } from 'node:crypto';
import type { ResultPayload } from './scenario';
import { seededRandom } from './random';

/** A rendered result with the integrity data a provider advertises. */
export interface RenderedPayload {
  bytes: Buffer;
  contentType: string;
  sizeBytes: number;
  sha256Hex: string;
  sha256Base64: string;
  /** Undefined when the payload has no natural record count (opaque bytes). */
  recordCount?: number;
  /** The JSON value, for synchronous answers (C3) that embed the result. */
  json?: unknown;
}

/** Renders a payload description to bytes. Deterministic for a given description. */
export function renderPayload(payload: ResultPayload): RenderedPayload {
  let bytes: Buffer;
  let contentType = 'application/json';
  let recordCount: number | undefined;
  let json: unknown;
  switch (payload.kind) {
    case 'json':
      json = payload.body ?? null;
      bytes = Buffer.from(JSON.stringify(json));
      recordCount = Array.isArray(json) ? json.length : 1;
      break;
    case 'ndjson':
      contentType = 'application/x-ndjson';
      bytes = Buffer.from(payload.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
      recordCount = payload.records.length;
      break;
    case 'batch': {
      const failed = new Set(payload.failedItems);
      const items = Array.from({ length: payload.items }, (_, i) =>
        failed.has(i)
          ? { id: `item-${i}`, status: 'failed', error: { code: 'item_failed', message: `item ${i} failed` } }
          : { id: `item-${i}`, status: 'ok', value: i },
      );
      json = { items };
      bytes = Buffer.from(JSON.stringify(json));
      recordCount = payload.items;
      break;
    }
    case 'generated': {
      contentType = 'application/octet-stream';
      bytes = Buffer.allocUnsafe(payload.sizeBytes);
      const rnd = seededRandom(payload.sizeBytes);
      for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(Math.floor(rnd.next() * 0x100000000), i);
      for (let i = bytes.length - (bytes.length % 4); i < bytes.length; i++) bytes[i] = 0x2a;
      break;
    }
  }
  const hash = createHash('sha256').update(bytes).digest();
  return {
    bytes,
    contentType,
    sizeBytes: bytes.length,
    sha256Hex: hash.toString('hex'),
    sha256Base64: hash.toString('base64'),
    recordCount,
    json,
  };
}

/**
 * A cache of rendered payloads keyed by the script object, so a job keeps the payload of the script it was
 * created with even after the scenario changes.
 */
export class PayloadCache {
  private cache = new WeakMap<object, RenderedPayload>();

  /** The rendered payload for a script, rendering it on first use. */
  get(script: { result: ResultPayload }): RenderedPayload {
    let rendered = this.cache.get(script);
    if (!rendered) {
      rendered = renderPayload(script.result);
      this.cache.set(script, rendered);
    }
    return rendered;
  }

  /** Forgets every rendered payload. */
  clear(): void {
    this.cache = new WeakMap();
  }
}
