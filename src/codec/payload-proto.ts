/**
 * A Temporal payload as protobuf bytes (`temporal.api.common.v1.Payload`: `map<string, bytes> metadata = 1;
 * bytes data = 2;`), the plaintext the payload codec encrypts: the same bytes `@temporalio/proto` writes (checked
 * in test/codec/payload-proto.test.ts), so a payload encrypted here decrypts with Temporal's samples' codec and
 * back. Written by hand because the wire format is two fields; pure.
 */
import type { Payload } from '@temporalio/common';

const LENGTH_DELIMITED = 2;

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** One length-delimited field: its tag, its length, its bytes. */
function field(fieldNumber: number, bytes: Uint8Array): Uint8Array[] {
  return [Uint8Array.from([...varint((fieldNumber << 3) | LENGTH_DELIMITED), ...varint(bytes.length)]), bytes];
}

/** The payload as protobuf bytes: metadata entries in their order, then the data (omitted when empty). */
export function encodePayload(payload: Payload): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    const entry = Buffer.concat([...field(1, Buffer.from(key, 'utf8')), ...field(2, value ?? new Uint8Array())]);
    parts.push(...field(1, entry));
  }
  if (payload.data && payload.data.length > 0) parts.push(...field(2, payload.data));
  return Buffer.concat(parts);
}

/** Reads protobuf bytes field by field; throws on anything but well-formed length-delimited fields. */
function* fields(bytes: Uint8Array): Generator<[fieldNumber: number, value: Uint8Array]> {
  let at = 0;
  const readVarint = (): number => {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      if (at >= bytes.length || shift > 2 ** 35) throw new Error('truncated varint');
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const tag = readVarint();
    if ((tag & 7) !== LENGTH_DELIMITED) throw new Error(`unexpected wire type ${tag & 7}`);
    const length = readVarint();
    if (at + length > bytes.length) throw new Error('truncated field');
    yield [Math.floor(tag / 8), bytes.subarray(at, at + length)];
    at += length;
  }
}

/** The payload protobuf bytes hold. Throws `Error` on bytes that are not a payload. */
export function decodePayload(bytes: Uint8Array): Payload {
  const metadata: Record<string, Uint8Array> = {};
  let data: Uint8Array | undefined;
  for (const [fieldNumber, value] of fields(bytes)) {
    if (fieldNumber === 1) {
      let key = '';
      let entryValue: Uint8Array = new Uint8Array();
      for (const [entryField, entryBytes] of fields(value)) {
        if (entryField === 1) key = Buffer.from(entryBytes).toString('utf8');
        else if (entryField === 2) entryValue = Uint8Array.from(entryBytes);
      }
      metadata[key] = entryValue;
    } else if (fieldNumber === 2) data = Uint8Array.from(value);
  }
  return { metadata, ...(data !== undefined ? { data } : { data: new Uint8Array() }) };
}
