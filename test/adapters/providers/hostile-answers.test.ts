import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countBatchItems,
  interpretCancel,
  interpretCreate,
  interpretReconcile,
  interpretStatus,
  readResultIntegrity,
  type ProviderAnswer,
} from '../../../src/adapters/providers';
import { observationSchema } from '../../../src/core/observation';
import { BASE, preset } from './helpers';

const contracts = [preset('rest'), preset('lro'), preset('operation-location')];

/** Answers shaped like the dialects' but with arbitrary values, plus arbitrary JSON and text. */
const body = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      job_id: fc.jsonValue(),
      state: fc.jsonValue(),
      progress: fc.jsonValue(),
      result_url: fc.jsonValue(),
      error: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      name: fc.jsonValue(),
      done: fc.jsonValue(),
      metadata: fc.jsonValue(),
      error: fc.jsonValue(),
      response: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      status: fc.jsonValue(),
      percentCompleted: fc.jsonValue(),
      resourceLocation: fc.jsonValue(),
      jobs: fc.jsonValue(),
      operations: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
);
const headerValue = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.constant(`${BASE}/v1/operations/x`),
  fc.constant('https://evil.example/x'),
  fc.webUrl(),
  fc.string({ minLength: 5000, maxLength: 6000 }),
);
const answerArb: fc.Arbitrary<ProviderAnswer> = fc.record({
  status: fc.integer({ min: 100, max: 599 }),
  headers: fc.record(
    {
      location: headerValue,
      'operation-location': headerValue,
      'retry-after': headerValue,
      'x-request-id': headerValue,
      'content-type': fc.constantFrom('application/json', 'text/html', 'text/plain'),
    },
    { requiredKeys: [] },
  ),
  bodyJson: fc.option(body, { nil: undefined }),
  bodyText: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
  receivedAtMs: fc.integer({ min: 0, max: 2 ** 45 }),
});

describe('F8: hostile provider answers', () => {
  it('S2, F8: any answer becomes a schema-valid observation, never a crash', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...contracts),
        answerArb,
        fc.string({ minLength: 1, maxLength: 40 }),
        (contract, answer, jobId) => {
          observationSchema.parse(interpretCreate(contract, answer));
          observationSchema.parse(interpretStatus(contract, answer, { jobId }));
          observationSchema.parse(interpretCancel(contract, answer, { jobId }));
          const reconciled = interpretReconcile(contract, answer, { clientReference: jobId, token: jobId });
          observationSchema.parse(reconciled.observation);
          expect(reconciled.matches.length).toBeLessThanOrEqual(1000);
          readResultIntegrity(contract, answer.headers);
          countBatchItems(contract, answer.bodyJson);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('C4: no observation ever carries a status or result URL off the provider origin', () => {
    fc.assert(
      fc.property(fc.constantFrom(...contracts), answerArb, (contract, answer) => {
        for (const o of [interpretCreate(contract, answer), interpretStatus(contract, answer, { jobId: 'j' })]) {
          if (o.statusUrl !== undefined) expect(new URL(o.statusUrl).origin).toBe(BASE);
          if (o.resultReference?.url !== undefined) expect(new URL(o.resultReference.url).origin).toBe(BASE);
        }
      }),
      { numRuns: 300 },
    );
  });
});
