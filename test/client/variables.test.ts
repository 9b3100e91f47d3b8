/**
 * The client's `variables` (C5): checked for their grammar, and against the adapter's declarations when the caller
 * gives them, before anything is started; compared variable by variable on a join. No server is needed: a client
 * whose server does not exist proves nothing was sent.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { AsyncJobClient, AsyncJobInputError, InvalidVariableError } from '../../src/client';
import { variableDifferences } from '../../src/client/join';
import type { StartRequest } from '../../src/core/operation';
import { variableDeclarationsSchema } from '../../src/core/operation-variables';

const request: StartRequest = {
  operationId: 'op-1',
  provider: 'reports',
  payload: { report: 'sales' },
  variables: { scope: 'tenants/acme' },
  startedBy: 'svc:billing',
  authorisedBy: 'alice',
  createDeadline: { afterMs: 300_000 },
  resultDeadline: { afterMs: 3_600_000 },
};

const connection = Connection.lazy({ address: '127.0.0.1:1' });
const client = new AsyncJobClient({ client: new Client({ connection }) });
afterAll(() => connection.close());

describe('the client checks the variables before anything is started (C5)', () => {
  it('C5: a variable outside the grammar is invalid input naming it', async () => {
    const err = await client
      .start({ ...request, variables: { scope: 'line\nbreak', token: 'x' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AsyncJobInputError);
    expect((err as AsyncJobInputError).issues.map((i) => i.path)).toEqual(['variables.scope', 'variables.token']);
  });

  it("C5: with the adapter's declarations, a misfit is ASYNCJOB_ERR_INVALID_VARIABLE naming every variable", async () => {
    const declaredVariables = variableDeclarationsSchema.parse({
      scope: { pattern: 'tenants/[a-z]+', reserved: true, required: true },
      region: { type: 'integer' },
    });
    const err = await client
      .start({ ...request, variables: { scope: 'tenants/a/b', region: 'eu' } }, { declaredVariables })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidVariableError);
    expect((err as InvalidVariableError).code).toBe('ASYNCJOB_ERR_INVALID_VARIABLE');
    expect((err as InvalidVariableError).issues).toEqual([
      { path: 'variables.region', message: expect.stringContaining('must be an integer') },
      { path: 'variables.scope', message: 'does not match the pattern tenants/[a-z]+' },
    ]);
    expect((err as Error).message).toMatch(/^invalid operation variables: variables\.region: /);
  });

  it('C5: an adapter that declares none refuses any variable given', async () => {
    const err = await client.start(request, { declaredVariables: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidVariableError);
    expect((err as InvalidVariableError).issues).toEqual([
      { path: 'variables.scope', message: 'not declared: the adapter declares no variables' },
    ]);
  });
});

describe('a join compares the variables one by one (C5, I2)', () => {
  it('I2: names each variable that differs, absent on one side as undefined', () => {
    expect(variableDifferences({ a: '1', b: '2' }, { a: '1', b: '2' })).toEqual([]);
    expect(variableDifferences(undefined, {})).toEqual([]);
    expect(variableDifferences({ a: '1', b: '2' }, { b: '3', c: '4' })).toEqual([
      { field: 'variables.a', existing: '1', given: undefined },
      { field: 'variables.b', existing: '2', given: '3' },
      { field: 'variables.c', existing: undefined, given: '4' },
    ]);
  });
});
