/**
 * The data converters of processes that reach Temporal: with payload keys, the codec encrypts every payload and the
 * failure converter of `encoded-failures.ts` turns failure messages and stack traces into payloads it encrypts too;
 * without keys, the SDK's defaults (plaintext, as before encryption was turned on).
 */
import path from 'node:path';
import { defaultPayloadConverter, type DataConverter, type LoadedDataConverter } from '@temporalio/common';
import type { PayloadCodec } from '@temporalio/common';
import { failureConverter } from './encoded-failures';

/** Where the SDK loads the failure converter from (resolved as `require` does: `.ts` from source, `.js` built). */
const ENCODED_FAILURES_PATH = path.join(__dirname, 'encoded-failures');

/** The data converter of a worker or a replay (they take the failure converter by path, for the workflow bundle too). */
export function workerDataConverter(payloadCodecs: PayloadCodec[]): DataConverter {
  return payloadCodecs.length === 0 ? {} : { payloadCodecs, failureConverterPath: ENCODED_FAILURES_PATH };
}

/** The data converter of a client (`new Client({ dataConverter })`), loaded here so no module is loaded by path. */
export function clientDataConverter(payloadCodecs: PayloadCodec[]): DataConverter | LoadedDataConverter {
  if (payloadCodecs.length === 0) return {};
  return { payloadConverter: defaultPayloadConverter, failureConverter, payloadCodecs };
}
