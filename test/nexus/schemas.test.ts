/**
 * The `asyncjob` Nexus service's JSON Schemas (schema/nexus/) are current, describe the TypeScript types of
 * `src/nexus/service.ts`, and accept and refuse the same samples as the zod schemas the handler validates with.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { NEXUS_SCHEMA_DIR, nexusJsonSchemas, renderNexusSchema } from '../../src/nexus/json-schema';
import {
  type getOperationInputSchema,
  type messageAnswerSchema,
  NEXUS_SCHEMAS,
  type operationSummarySchema,
  type requestCancelInputSchema,
  type runJobInputSchema,
} from '../../src/nexus/schemas';
import type { GetOperationInput, RequestCancelInput, RunJobInput } from '../../src/nexus/service';
import type { MessageAnswer, OperationSummary } from '../../src/workflows/messages';

const ROOT = path.join(__dirname, '..', '..');

/** True when each type is assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const runJob = {
  operationId: 'report-2026-11-acme',
  provider: 'reports',
  payload: { report: 'monthly-sales' },
  authorisedBy: 'policy:reports',
  createDeadline: { afterMs: 60_000 },
  resultDeadline: { afterMs: 3_600_000 },
};
const summary: OperationSummary = {
  operationId: 'report-2026-11-acme',
  provider: 'reports',
  localState: 'succeeded',
  jobId: 'job-1',
  result: { validation: 'valid', sha256: 'a'.repeat(64), sizeBytes: 12 },
  escalation: null,
  statusRequestsUsed: 3,
  statusRequestsAllowed: 100,
};

/** Per operation and direction: samples both must accept, and samples both must refuse. */
const SAMPLES: Record<string, { accept: unknown[]; refuse: unknown[] }> = {
  'runJob.input': {
    accept: [runJob, { ...runJob, startedBy: 'service:billing', policy: { maxDelayMs: 60_000 } }],
    refuse: [
      { ...runJob, operationId: '.hidden' },
      { ...runJob, createDeadline: { afterMs: 0 } },
      { ...runJob, unknown: true },
      { ...runJob, provider: undefined },
    ],
  },
  'runJob.output': {
    accept: [summary, { ...summary, localState: 'escalated', escalation: { reason: 'rate_limited', text: 'x' } }],
    refuse: [
      { ...summary, localState: 'done' },
      { ...summary, escalation: undefined },
    ],
  },
  'getOperation.input': { accept: [{ operationId: 'op-1' }], refuse: [{}, { operationId: 'a b' }] },
  'getOperation.output': { accept: [summary], refuse: [{ operationId: 'op-1' }] },
  'requestCancel.input': {
    accept: [
      { operationId: 'op-1', reason: 'withdrawn' },
      { operationId: 'op-1', reason: 'x', requestedBy: 'a@b.c' },
    ],
    refuse: [{ operationId: 'op-1' }, { operationId: 'op-1', reason: '' }, { operationId: 'op-1', reason: 'x', y: 1 }],
  },
  'requestCancel.output': {
    accept: [
      { accepted: true, localState: 'cancel_requested' },
      { accepted: false, code: 'ASYNCJOB_ERR_CANCEL_UNSUPPORTED', message: 'no cancel endpoint' },
    ],
    refuse: [{ accepted: false, code: 'NOT_A_CODE', message: 'x' }, { accepted: true }],
  },
};

describe('the Nexus JSON Schemas', () => {
  const files = nexusJsonSchemas();

  it('schema/nexus/ holds exactly what npm run schema writes from the zod schemas', () => {
    for (const [file, schema] of Object.entries(files))
      expect(readFileSync(path.join(ROOT, NEXUS_SCHEMA_DIR, file), 'utf8'), `${file}: run npm run schema`).toBe(
        renderNexusSchema(schema),
      );
  });

  it('the zod schemas are the TypeScript types of the service definition', () => {
    // Each assignable to the other (RunJobInput is an Omit & intersection, which toEqualTypeOf compares by form).
    expectTypeOf<Same<z.output<typeof runJobInputSchema>, RunJobInput>>().toEqualTypeOf<true>();
    expectTypeOf<z.output<typeof getOperationInputSchema>>().toEqualTypeOf<GetOperationInput>();
    expectTypeOf<z.output<typeof requestCancelInputSchema>>().toEqualTypeOf<RequestCancelInput>();
    expectTypeOf<z.output<typeof operationSummarySchema>>().toEqualTypeOf<OperationSummary>();
    expectTypeOf<z.output<typeof messageAnswerSchema>>().toEqualTypeOf<MessageAnswer>();
  });

  it.each(Object.entries(SAMPLES))(
    '%s: the JSON Schema and the zod schema accept and refuse the same samples',
    (key, samples) => {
      const [operation, direction] = key.split('.') as [keyof typeof NEXUS_SCHEMAS, 'input' | 'output'];
      const validate = new Ajv2020({ strict: false }).compile(files[`${key}.schema.json`]!);
      const zod = NEXUS_SCHEMAS[operation][direction];
      for (const sample of samples.accept) {
        expect(validate(sample), JSON.stringify(validate.errors)).toBe(true);
        expect(zod.safeParse(sample).success).toBe(true);
      }
      for (const sample of samples.refuse) {
        const plain = JSON.parse(JSON.stringify(sample)) as unknown;
        expect(validate(plain), JSON.stringify(sample)).toBe(false);
        expect(zod.safeParse(plain).success, JSON.stringify(sample)).toBe(false);
      }
    },
  );
});
