import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { adapterFromContract, parseProviderContract, type ProviderAdapter } from '../../../src/adapters/providers';
import { answer, valid } from './helpers';

const ACME = 'https://api.acme.example';

/** The annotated example of docs/writing-an-adapter.md, so the documentation cannot drift from the schema. */
async function documentedExample(): Promise<ProviderAdapter> {
  const text = await readFile(path.join(__dirname, '../../../docs/writing-an-adapter.md'), 'utf8');
  const block = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((b) => b.startsWith('name: acme-exports'));
  if (block === undefined) throw new Error('the acme-exports example is missing from the doc');
  return adapterFromContract(
    parseProviderContract(parseYaml(block), 'acme-exports', { env: { ACME_EXPORTS_URL: ACME } }),
  );
}

describe('the documented fourth dialect (acme-exports)', () => {
  it('loads, with the credential by reference and header names lower-cased', async () => {
    const adapter = await documentedExample();
    expect(adapter.credential).toEqual({
      scheme: 'header',
      headerName: 'x-api-key',
      secretFile: '/run/secrets/acme-exports-key',
    });
    expect(adapter.cancel).toEqual({ supported: true, idempotent: false });
    // H3: the top-level notFoundWindowMs is the provider's default window.
    expect(adapter.policy).toEqual({ notFoundWindowMs: 10_000, baseDelayMs: 10_000, maxDelayMs: 300_000 });
  });

  it('I1: the token goes in dedupe_key and the reference in X-Client-Ref', async () => {
    const adapter = await documentedExample();
    const built = adapter.buildCreateRequest({
      payload: { query: 'q1', format: 'csv' },
      token: 'tok-1',
      clientReference: 'op-9',
      nowMs: 0,
    });
    expect(built).toEqual({
      kind: 'request',
      request: {
        method: 'POST',
        url: `${ACME}/api/v2/exports`,
        headers: { accept: 'application/json', 'content-type': 'application/json', 'x-client-ref': 'op-9' },
        json: { query: 'q1', format: 'csv', dedupe_key: 'tok-1' },
      },
    });
  });

  it('C2: a 201 names the export and its relative self link', async () => {
    const adapter = await documentedExample();
    const o = valid(
      adapter.interpretCreate(
        answer(201, {
          json: { export: { id: 'exp_123', status: 'QUEUED', links: { self: '/api/v2/exports/exp_123' } } },
        }),
      ),
    );
    expect(o).toMatchObject({
      remoteJobId: 'exp_123',
      statusUrl: `${ACME}/api/v2/exports/exp_123`,
      category: 'pending',
    });
  });

  it('R2: READY carries the download link, base64 checksum as hex, size and rows', async () => {
    const adapter = await documentedExample();
    const hex = '0f'.repeat(32);
    const body = {
      export: {
        id: 'exp_123',
        status: 'READY',
        completion: 1,
        rows: 1200,
        bytes: 48213,
        checksum: { sha256: Buffer.from(hex, 'hex').toString('base64') },
        links: { download: '/files/exp_123.csv' },
      },
    };
    const o = valid(adapter.interpretStatus(answer(200, { json: body }), { jobId: 'exp_123' }));
    expect(o).toMatchObject({
      category: 'success',
      progress: 1,
      resultReference: { url: `${ACME}/files/exp_123.csv`, sha256: hex, sizeBytes: 48213, recordCount: 1200 },
    });
    expect(adapter.readResultIntegrity({ 'content-type': 'text/html' })).toMatchObject({ contentTypeAccepted: false });
  });

  it('U2: reconciliation keeps only exact client_ref matches', async () => {
    const adapter = await documentedExample();
    const { matches } = adapter.interpretReconcile(
      answer(200, {
        json: {
          data: [
            { id: 'exp_1', client_ref: 'op-9', export: { status: 'BUILDING' } },
            { id: 'exp_2', client_ref: 'op-90', export: { status: 'READY' } },
          ],
        },
      }),
      { clientReference: 'op-9' },
    );
    expect(matches).toEqual([{ remoteJobId: 'exp_1', remoteState: 'BUILDING', category: 'pending' }]);
    // Without the reference to compare, nothing can be claimed to match.
    expect(
      adapter.interpretReconcile(answer(200, { json: { data: [{ id: 'exp_1', client_ref: 'op-9' }] } })).matches,
    ).toEqual([]);
  });

  it('P1: PURGED is expired and ERROR keeps the failure reason', async () => {
    const adapter = await documentedExample();
    expect(adapter.interpretStatus(answer(200, { json: { export: { status: 'PURGED' } } })).category).toBe('expired');
    expect(
      adapter.interpretStatus(
        answer(200, {
          json: { export: { status: 'ERROR', failure: { reason: 'query_timeout', detail: 'took too long' } } },
        }),
      ),
    ).toMatchObject({
      category: 'failure',
      providerError: { code: 'query_timeout', message: 'took too long' },
    });
  });
});
