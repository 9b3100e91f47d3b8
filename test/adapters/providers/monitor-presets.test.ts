/**
 * Every preset held to the monitor rule (V5): for each built-in and convention preset and each create method, a
 * create answer that names a status monitor (a poll URL source read with another reading than the create answer),
 * answered with any status the preset accepts and a body without a state word, is pending at the monitor, never
 * done; and a built-in preset's create answer that names its job without a state word is pending too (C2), so no
 * preset ends a job on its create answer's HTTP status alone. Pure: answers as the HTTP layer hands them over.
 */
import { describe, expect, it } from 'vitest';
import {
  interpretCreate,
  parseProviderContract,
  PRESET_NAMES,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { CONVENTION_PRESET_NAMES } from '../../../src/adapters/providers/presets/conventions';
import { BASE, answer, preset, valid } from './helpers';

const METHODS = ['PUT', 'PATCH', 'POST', 'DELETE'] as const;
const MONITOR = `${BASE}/operations/op-1`;

function convention(name: string, method: string): ProviderContract {
  return parseProviderContract(
    { preset: name, name: 'p', baseUrl: BASE, credential: { scheme: 'none' }, create: { method, path: '/things/t1' } },
    'test',
    {},
  );
}

/** The header sources of a contract's poll URL that name a status monitor (read with another reading). */
function monitorHeaders(contract: ProviderContract): string[] {
  const createReading = typeof contract.create.readState === 'string' ? contract.create.readState : undefined;
  return (contract.create.statusUrl ?? [])
    .filter((s) => s.from === 'header' && s.reading !== createReading)
    .map((s) => (s as { name: string }).name);
}

/** Every 2xx a contract's create takes as an answer: accepted or a synchronous success. */
function twoHundreds(contract: ProviderContract): number[] {
  const statuses = [...contract.create.acceptedStatuses, ...(contract.create.synchronousSuccess?.statuses ?? [])];
  return [...new Set(statuses)].filter((s) => s >= 200 && s < 300 && s !== 204);
}

describe('every preset against the monitor rule (V5)', () => {
  // aws-json reads no poll URL (every call is a POST to / naming the job): its own tests are aws-json-preset.test.ts.
  const cases = CONVENTION_PRESET_NAMES.filter((name) => name !== 'aws-json').flatMap((name) =>
    METHODS.flatMap((method) => {
      const contract = convention(name, method);
      return monitorHeaders(contract).flatMap((header) =>
        twoHundreds(contract).map((status) => [name, method, status, header, contract] as const),
      );
    }),
  );

  it('V5: the convention presets that read a monitor declare one for every create method; google-lro reads none', () => {
    const presets = new Set(cases.map(([name, method]) => `${name} ${method}`));
    for (const method of METHODS) {
      expect(presets).toContain(`azure-lro ${method}`);
      expect(presets).toContain(`http-202-location ${method}`);
      // AIP-151: the create answer is the operation itself, read with its own reading; its done field is the monitor.
      expect(monitorHeaders(convention('google-lro', method))).toEqual([]);
    }
  });

  it.each(cases.map(([name, method, status, header]) => [name, method, status, header]))(
    'V5: %s, a %s answered %i with %s and a body without a state word is pending at the monitor, never done',
    (name, method, status, header) => {
      const contract = cases.find((c) => c[0] === name && c[1] === method)![4];
      const o = valid(
        interpretCreate(
          contract,
          answer(status, { json: { id: '/things/t1' }, headers: { [header]: MONITOR } }),
          'create',
          {
            requestUrl: `${BASE}/things/t1`,
          },
        ),
      );
      expect(o).toMatchObject({ category: 'pending', statusUrl: MONITOR });
      expect(o.resultReference).toBeUndefined();
      expect(o.parseProblem).toBeUndefined();
    },
  );

  it.each(PRESET_NAMES.map((name) => [name]))(
    'V5, C2: the built-in %s preset: a create answer naming its job and poll URL without a state word is pending at every 2xx it takes, never done',
    (name) => {
      const contract = preset(name);
      for (const status of twoHundreds(contract)) {
        const o = valid(
          interpretCreate(
            contract,
            answer(status, {
              json: { job_id: 'j1', name: 'operations/j1' },
              headers: { Location: `${BASE}/v1/jobs/j1`, 'Operation-Location': `${BASE}/v1/analyze/j1` },
            }),
          ),
        );
        expect(o, `${name} ${status}`).toMatchObject({ category: 'pending', remoteJobId: 'j1' });
        expect(o.resultReference, `${name} ${status}`).toBeUndefined();
      }
    },
  );
});
