/**
 * The result endpoint shared by the dialects: serves the payload with the integrity headers each dialect
 * documents, refuses before success (409) and after expiry (410).
 */
import type { SimJob } from '../jobs';
import type { DialectName } from '../scenario';
import { errorResponse, type DialectContext, type SimResponse } from './types';

/** The result answer for a job in `dialect`'s header style. */
export function resultResponse(job: SimJob, ctx: DialectContext, dialect: DialectName): SimResponse {
  const state = ctx.jobs.state(job);
  if (state === 'expired') return errorResponse(410, { error: { code: 'expired', message: 'the result has expired' } });
  if (state !== 'succeeded')
    return errorResponse(409, { error: { code: 'not_ready', message: `the job is ${state}` }, state });
  const { served, advertised } = ctx.payloadOf(job);
  const headers: Record<string, string> = {};
  if (dialect === 'rest') {
    headers['x-content-sha256'] = advertised.sha256Hex;
    if (advertised.recordCount !== undefined) headers['x-record-count'] = String(advertised.recordCount);
  } else if (dialect === 'operation-location') {
    headers['x-ms-content-sha256'] = advertised.sha256Base64;
  }
  return { status: 200, headers, raw: served, contentType: advertised.contentType };
}
