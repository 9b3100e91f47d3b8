/**
 * A failed operation says why: `status` and `watch` show the provider's error code and message (kept in the
 * record as `remote.lastError`, the same facts `audit show` prints), in text and in the JSON view.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import { FakeClient, fakeDeps, observing, record } from './fixtures';

const failedRecord = (lastError: { code?: string; message?: string } | undefined) => {
  const base = observing(0.9);
  return record({
    ...base,
    localState: 'failed',
    remote: { ...base.remote, state: 'failed', category: 'failure', ...(lastError ? { lastError } : {}) },
  });
};

describe('a failed operation says why', () => {
  it('status prints the provider error code and message, and exits 1', async () => {
    const client = new FakeClient();
    client.records = [failedRecord({ code: 'quota_exceeded', message: 'the monthly quota is spent' })];
    const io = fakeDeps(client);
    expect(await runCli(['status', 'op-42'], io.deps)).toBe(EXIT.operationEndedBadly);
    expect(io.stdout()).toContain('  state:     failed (final); remote failed (failure)');
    expect(io.stdout()).toContain(
      "  error:     quota_exceeded: the monthly quota is spent (the provider's last error)",
    );
  });

  it('status --json carries providerError in the operation view; null when the provider gave none', async () => {
    const client = new FakeClient();
    client.records = [failedRecord({ code: 'quota_exceeded' })];
    const io = fakeDeps(client);
    await runCli(['status', 'op-42', '--json'], io.deps);
    expect(io.json()[0]).toMatchObject({ operation: { providerError: { code: 'quota_exceeded', message: null } } });

    const quiet = new FakeClient();
    quiet.records = [failedRecord(undefined)];
    const plain = fakeDeps(quiet);
    await runCli(['status', 'op-42', '--json'], plain.deps);
    expect(plain.json()[0]).toMatchObject({ operation: { localState: 'failed', providerError: null } });
    const text = fakeDeps(quiet);
    await runCli(['status', 'op-42'], text.deps);
    expect(text.stdout()).not.toContain('  error:');
  });

  it('watch ends a failed operation with the provider error, on its last line and its end line', async () => {
    const client = new FakeClient();
    client.records = [observing(0.5), failedRecord({ code: 'job_failed', message: 'the renderer crashed' })];
    const io = fakeDeps(client);
    expect(await runCli(['watch', 'op-42'], io.deps)).toBe(EXIT.operationEndedBadly);
    const lines = io.stdout().trim().split('\n');
    expect(lines.at(-2)).toContain('local failed');
    expect(lines.at(-2)).toContain('provider error job_failed: the renderer crashed');
    expect(lines.at(-1)).toBe('operation op-42 ended: failed: provider error job_failed: the renderer crashed');
  });
});
