import { describe, expect, it } from 'vitest';
import { DEADLINE_TOLERANCE_MS, joinDifferences } from '../../src/client';
import type { StartRequest } from '../../src/core/operation';

const CREATED = Date.UTC(2026, 10, 29, 10);
const original: StartRequest = {
  operationId: 'op-1',
  provider: 'reports',
  payload: { report: 'sales' },
  startedBy: 'svc:billing',
  authorisedBy: 'policy:monthly',
  createDeadline: { afterMs: 300_000 },
  resultDeadline: { atMs: CREATED + 3_600_000 },
  policy: { maxStatusRequests: 60 },
};

describe('the join rule: the same request joins only with the same settings', () => {
  it('the same request is the same, whenever it is repeated', () => {
    expect(joinDifferences(original, CREATED, { ...original })).toEqual([]);
  });

  it('a deadline counts from the creation: a duration and the instant it resolved to are the same deadline', () => {
    expect(
      joinDifferences(original, CREATED, {
        ...original,
        createDeadline: { atMs: CREATED + 300_000 },
        resultDeadline: { afterMs: 3_600_000 },
      }),
    ).toEqual([]);
    expect(
      joinDifferences(original, CREATED, {
        ...original,
        createDeadline: { atMs: CREATED + 300_000 + DEADLINE_TOLERANCE_MS },
      }),
    ).toEqual([]);
    expect(
      joinDifferences(original, CREATED, {
        ...original,
        createDeadline: { atMs: CREATED + 300_000 + DEADLINE_TOLERANCE_MS + 1 },
      }).map((d) => d.field),
    ).toEqual(['createDeadline']);
  });

  it('a policy is compared with its defaults filled in, field by field', () => {
    expect(
      joinDifferences(original, CREATED, { ...original, policy: { maxStatusRequests: 60, baseDelayMs: 5_000 } }),
    ).toEqual([]);
    expect(joinDifferences({ ...original, policy: undefined }, CREATED, { ...original, policy: {} })).toEqual([]);
    expect(
      joinDifferences(original, CREATED, { ...original, policy: { maxStatusRequests: 61, jitter: 'full' } }),
    ).toEqual([
      { field: 'policy.jitter', existing: 'bounded', given: 'full' },
      { field: 'policy.maxStatusRequests', existing: 60, given: 61 },
    ]);
  });

  it('names every differing setting: starter, authoriser, client reference, deadlines, policy', () => {
    const given: StartRequest = {
      ...original,
      startedBy: 'svc:other',
      authorisedBy: 'alice',
      clientReference: 'ref-2',
      resultDeadline: { afterMs: 7_200_000 },
      policy: { maxStatusRequests: 10 },
    };
    expect(joinDifferences(original, CREATED, given)).toEqual([
      { field: 'startedBy', existing: 'svc:billing', given: 'svc:other' },
      { field: 'authorisedBy', existing: 'policy:monthly', given: 'alice' },
      { field: 'clientReference', existing: undefined, given: 'ref-2' },
      { field: 'resultDeadline', existing: { atMs: CREATED + 3_600_000 }, given: { afterMs: 7_200_000 } },
      { field: 'policy.maxStatusRequests', existing: 60, given: 10 },
    ]);
  });

  it('leaves the payload and the provider to the fingerprint check (I2)', () => {
    expect(
      joinDifferences(original, CREATED, { ...original, payload: { report: 'other' }, provider: 'other' }),
    ).toEqual([]);
  });
});
