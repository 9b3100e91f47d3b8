/**
 * The token of an operation started from workflow code, drawn by the worker (I1).
 */
import { describe, expect, it } from 'vitest';
import { drawIdempotencyToken } from '../../src/activities/draw-idempotency-token';

describe('drawIdempotencyToken', () => {
  it('I1: draws 256 random bits as base64url, fresh on every draw', async () => {
    const draw = drawIdempotencyToken();
    const tokens = await Promise.all(Array.from({ length: 100 }, () => draw({ operationId: 'op-1' })));
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(tokens).size).toBe(100);
  });
});
