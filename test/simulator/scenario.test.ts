import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadScenarioFile,
  parseFaultHeader,
  parseScenario,
  parseScenarioText,
  ScenarioError,
  startSimulator,
} from '../../src/simulator';
import { runSimulateCommand } from '../../src/simulator/cli';
import { call, obj, TOKEN } from './helpers';

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ScenarioError) return [...err.issues];
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('scenario files', () => {
  it.each(readdirSync(join(__dirname, '../../examples/scenarios')))('the example %s validates', (file) => {
    const scenario = loadScenarioFile(join(__dirname, '../../examples/scenarios', file));
    expect(scenario.token).toBe('local-dev-token');
    expect(Object.keys(scenario.scripts).length).toBeGreaterThan(0);
  });

  it('every problem is reported at once, each naming its field', () => {
    const issues = issuesOf(() =>
      parseScenario({
        dialect: 'soap',
        scripts: {
          slow: { steps: [{ state: '', durationMs: -1 }] },
          both: { steps: [{ state: 'running', durationMs: 5, polls: 2 }] },
          faulty: { faults: [{ on: 'status', fault: { kind: 'http_error', status: 200 } }] },
        },
        match: [{ field: 'a', equals: 1, script: 'missing' }],
      }),
    );
    const joined = issues.join('\n');
    expect(joined).toMatch(/^dialect: /m);
    expect(joined).toMatch(/^scripts\.slow\.steps\.0\.state: /m);
    expect(joined).toMatch(/^scripts\.slow\.steps\.0\.durationMs: /m);
    expect(joined).toMatch(/^scripts\.both\.steps\.0: a step lasts either durationMs or polls/m);
    expect(joined).toMatch(/^scripts\.faulty\.faults\.0\.fault\.status: /m);
  });

  it('a match naming an unknown script is refused at match.N.script', () => {
    expect(issuesOf(() => parseScenario({ match: [{ field: 'a', equals: 1, script: 'missing' }] }))).toEqual([
      'match.0.script: no script named "missing"',
    ]);
  });

  it('YAML and JSON text both parse; broken text names the format', () => {
    expect(parseScenarioText('dialect: lro\ntoken: t\n').dialect).toBe('lro');
    expect(parseScenarioText('{"dialect":"rest"}').dialect).toBe('rest');
    expect(issuesOf(() => parseScenarioText('{"dialect":', 'x.json'))[0]).toMatch(/not valid JSON/);
    const dir = mkdtempSync(join(tmpdir(), 'sim-scenario-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'scripts:\n  s:\n    steps: []\n');
    const err = (() => {
      try {
        loadScenarioFile(file);
      } catch (e) {
        return e as ScenarioError;
      }
      return undefined;
    })();
    expect(err?.message).toContain(file);
    expect(err?.issues[0]).toMatch(/^scripts\.s\.steps: /);
  });

  it('X-Sim-Fault accepts JSON and the short form, and refuses unknown kinds', () => {
    expect(parseFaultHeader('{"kind":"delay","ms":5}')).toEqual({ kind: 'fault', fault: { kind: 'delay', ms: 5 } });
    expect(parseFaultHeader('http_error:status=429,retryAfterRaw=soon')).toEqual({
      kind: 'fault',
      fault: { kind: 'http_error', status: 429, retryAfterRaw: 'soon' },
    });
    expect(parseFaultHeader('teleport').kind).toBe('invalid');
    expect(parseFaultHeader(undefined).kind).toBe('none');
  });

  it('POST /_sim/scenario installs a scenario, or answers 400 with the field-named issues', async () => {
    const sim = await startSimulator({ token: TOKEN });
    try {
      const bad = await call(`${sim.url}/_sim/scenario`, {
        method: 'POST',
        auth: false,
        body: { scripts: { x: { steps: [{ state: 'running', polls: 0 }] } } },
      });
      expect(bad.status).toBe(400);
      expect((obj(obj(bad.json)['error'])['issues'] as string[])[0]).toMatch(/^scripts\.x\.steps\.0\.polls: /);
      const ok = await call(`${sim.url}/_sim/scenario`, {
        method: 'POST',
        auth: false,
        body: { dialect: 'lro', scripts: { x: {} } },
      });
      expect(ok.status).toBe(200);
      expect(sim.dialect).toBe('lro');
      const op = await call(`${sim.url}/v1/operations:start`, {
        method: 'POST',
        body: { scenario: 'x', request_id: 'r1' },
      });
      expect(op.status).toBe(200);
      expect(sim.job(String(obj(op.json)['name']))!.scriptName).toBe('x');
    } finally {
      await sim.stop();
    }
  });

  it('an injected clock drives time-based lifecycles without waiting', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const sim = await startSimulator({
      token: TOKEN,
      clock: () => now,
      scenario: {
        scripts: { default: { steps: [{ state: 'running', durationMs: 10 * 60_000 }, { state: 'succeeded' }] } },
      },
    });
    try {
      const id = String(obj((await call(`${sim.url}/v1/jobs`, { method: 'POST', body: {} })).json)['job_id']);
      expect(obj((await call(`${sim.url}/v1/jobs/${id}`)).json)['state']).toBe('running');
      now += 10 * 60_000;
      const done = obj((await call(`${sim.url}/v1/jobs/${id}`)).json);
      expect(done).toMatchObject({ state: 'succeeded', updated_at: '2030-01-01T00:10:00.000Z' });
      expect(sim.requests().map((r) => r.atMs - Date.parse('2030-01-01T00:00:00Z'))).toEqual([0, 0, 600_000]);
    } finally {
      await sim.stop();
    }
  });

  it('a simulator without a token refuses to start', async () => {
    await expect(startSimulator({ dialect: 'rest' })).rejects.toThrow(/token/);
  });

  it('request accounting is bounded by maxRecordedRequests, oldest dropped first', async () => {
    const sim = await startSimulator({ token: TOKEN, maxRecordedRequests: 5 });
    try {
      for (let i = 0; i < 8; i++) await call(`${sim.url}/v1/jobs/job_${i}`);
      expect(sim.requests().map((r) => r.path)).toEqual([3, 4, 5, 6, 7].map((i) => `/v1/jobs/job_${i}`));
      const over = await call(`${sim.url}/_sim/requests`, { auth: false });
      expect(obj(over.json)['dropped']).toBe(3);
    } finally {
      await sim.stop();
    }
  });

  it('the simulate command refuses bad arguments and a bad scenario with exit code 2', async () => {
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      errors.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await runSimulateCommand(['--port', 'abc'])).toBe(2);
      expect(await runSimulateCommand(['--dialect', 'soap'])).toBe(2);
      expect(await runSimulateCommand(['--bogus'])).toBe(2);
      expect(await runSimulateCommand(['--port', '0', '--scenario', '/nonexistent/scenario.yaml'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(errors.join('')).toContain('--port');
    expect(errors.join('')).toContain('/nonexistent/scenario.yaml');
  });
});
