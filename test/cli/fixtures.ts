/**
 * Fakes for CLI tests: a scripted client behind the `CliClient` seam, in-memory output, a manual clock, and the
 * command lines they run.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  OperationFailedError,
  OperationNotFoundError,
  type EscalationView,
  type ListOptions,
  type OperationDescription,
  type OperationListing,
  type RecordedResult,
  type StartOptions,
  VerifiedResultStream,
  type WaitOptions,
  type WatchOptions,
} from '../../src/client';
import { parseCommandLine, UsageError } from '../../src/cli/args';
import type { CliClient, CliDeps, StartedOperation } from '../../src/cli/deps';
import { type Decision, optionsFor, renderEscalation, type OpenEscalation } from '../../src/core/escalation';
import { newOperationRecord, type OperationRecord, type StartRequest } from '../../src/core/operation';
import { FINAL_STATES } from '../../src/core/transitions';
import type { CancelRequest, OperationSummary } from '../../src/workflows/messages';

/** 2026-11-29T10:00:00.000Z */
export const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);

/** `asyncjob start` of operation `op-42` at `provider`, with every required option (the record of {@link record}). */
export function startArgv(provider = 'rest'): string[] {
  return [
    'start',
    '--provider',
    provider,
    '--operation-id',
    'op-42',
    '--payload',
    '{"report":"sales"}',
    '--started-by',
    'svc:billing',
    '--authorised-by',
    'alice',
    '--create-deadline',
    '5m',
    '--result-deadline',
    '1h',
  ];
}

/** The usage error `parseCommandLine` throws for `argv`; fails the test when it throws none. */
export function usageError(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

/** A record of operation `op-42` at provider `rest`, created at T0, with `patch` applied. */
export function record(patch: Partial<OperationRecord> = {}): OperationRecord {
  const made = newOperationRecord({
    request: {
      operationId: 'op-42',
      provider: 'rest',
      payload: { report: 'sales' },
      startedBy: 'svc:billing',
      authorisedBy: 'alice',
      createDeadline: { afterMs: 120_000 },
      resultDeadline: { afterMs: 3_600_000 },
    },
    nowMs: T0,
    idempotencyToken: 'AAECAwQFBgcICQoLDA0ODw',
    traceId: '0af7651916cd43dd8448eb211c80319c',
  });
  if (made.kind !== 'ok') throw new Error(JSON.stringify(made.issues));
  return { ...made.record, ...patch };
}

/** An observing record with job J-1, `progress` and the next poll at T0 + 30 s from Retry-After. */
export function observing(progress: number | undefined, patch: Partial<OperationRecord> = {}): OperationRecord {
  const r = record();
  return record({
    localState: 'observing',
    jobId: 'J-1',
    remote: {
      ...r.remote,
      jobIds: ['J-1'],
      state: 'running',
      category: 'pending',
      ...(progress !== undefined ? { progress } : {}),
    },
    schedule: { nextPollAtMs: T0 + 30_000, delaySource: 'provider_retry_after' },
    used: { ...r.used, statusRequests: 3 },
    ...patch,
  });
}

/** An open escalation for `reason` with cancel supported (extend: 15 min, 4 checks). */
function escalation(reason: OpenEscalation['reason'] = 'deadline_exceeded'): OpenEscalation {
  return {
    reason,
    message: {
      operationId: 'op-42',
      provider: 'rest',
      providerJobIds: ['J-1'],
      traceId: '0af7651916cd43dd8448eb211c80319c',
      localState: 'observing',
      lastRemoteState: 'running',
      elapsedMs: 3_600_000,
      statusRequestsUsed: 20,
      statusRequestsAllowed: 20,
      reason,
      detail: 'the result deadline passed',
    },
    options: optionsFor(
      reason,
      {
        capabilities: { cancel: true, repeatableCollect: false },
        providerJob: true,
        jobIds: ['J-1'],
        cancelSent: false,
        createMayHaveArrived: false,
        resultOnRecord: reason === 'result_validation_failed',
        resultLocated: false,
      },
      { extensionMs: 900_000, extensionStatusRequests: 4, maxTransportFailures: 5, maxRateLimited: 3 },
    ),
    raisedAtMs: T0 + 3_600_000,
    decisionDeadlineMs: T0 + 7_200_000,
    raisedFrom: 'observing',
  };
}

/** An escalated record. */
export function escalated(reason: OpenEscalation['reason'] = 'deadline_exceeded'): OperationRecord {
  return observing(0.5, { localState: 'escalated', escalation: escalation(reason) });
}

/** A summary of a record. */
function summaryOf(r: OperationRecord): OperationSummary {
  return {
    operationId: r.operationId,
    provider: r.provider,
    localState: r.localState,
    ...(r.jobId !== undefined ? { jobId: r.jobId } : {}),
    ...(r.remote.state !== undefined ? { remoteState: r.remote.state } : {}),
    result: r.result,
    escalation: r.escalation ? { reason: r.escalation.reason, text: renderEscalation(r.escalation) } : null,
    statusRequestsUsed: r.used.statusRequests,
    statusRequestsAllowed: r.budgets.maxStatusRequests,
  };
}

/** A client whose answers are scripted; it records every call. */
export class FakeClient implements CliClient {
  calls: { method: string; args: unknown[] }[] = [];
  /** Records answered by successive `get` calls; the last one repeats. */
  records: OperationRecord[] = [];
  getError: unknown;
  started: StartedOperation = {
    operationId: 'op-42',
    runId: 'run-1',
    joined: false,
    requestFingerprint: 'sha256:ab',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    executionStatus: 'RUNNING',
    replaced: null,
  };
  startError: unknown;
  final: OperationRecord = record({ localState: 'succeeded' });
  updateError: unknown;
  executionStatus = 'RUNNING';
  /** The failure `describeOperation` reports (and `watch` throws) for a workflow that is not running. */
  failure: OperationDescription['failure'] = null;
  /** Set by `fakeDeps`: the fake clock's sleep, for `watch`'s interval. */
  sleep: (ms: number) => Promise<void> = async () => {};
  closed = false;
  exists = true;
  /** The bytes `readResult` serves, checked against {@link recordedResult} as the real client checks them. */
  resultBytes = Buffer.from('{"items":[1,2,3]}');
  recordedResult: RecordedResult = {
    location: 's3://results/op/1-result',
    sha256: createHash('sha256').update(this.resultBytes).digest('hex'),
    sizeBytes: this.resultBytes.length,
  };

  private seen(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
    if (!this.exists) throw new OperationNotFoundError(String(args[0]));
  }

  async start(request: StartRequest, options?: StartOptions): Promise<StartedOperation> {
    this.calls.push({ method: 'start', args: options ? [request, options] : [request] });
    if (this.startError) throw this.startError;
    return this.started;
  }
  async get(operationId: string, options?: { timeoutMs?: number }): Promise<OperationRecord> {
    this.seen('get', operationId, ...(options ? [options] : []));
    if (this.getError) throw this.getError;
    const r = this.records.length > 1 ? this.records.shift()! : this.records[0];
    if (!r) throw new Error('no record scripted');
    return r;
  }
  async escalation(operationId: string): Promise<EscalationView | null> {
    this.seen('escalation', operationId);
    const r = this.records[0];
    return r?.escalation ? { ...r.escalation, text: renderEscalation(r.escalation) } : null;
  }
  async cancel(operationId: string, request: CancelRequest): Promise<{ accepted: true; localState: string }> {
    this.seen('cancel', operationId, request);
    if (this.updateError) throw this.updateError;
    return { accepted: true, localState: 'cancel_requested' };
  }
  async decide(operationId: string, decision: Decision): Promise<{ accepted: true; localState: string }> {
    this.seen('decide', operationId, decision);
    if (this.updateError) throw this.updateError;
    return { accepted: true, localState: 'observing' };
  }
  async result(operationId: string, options?: WaitOptions): Promise<OperationSummary> {
    this.seen('result', operationId, ...(options ? [options] : []));
    return summaryOf(this.final);
  }
  /** Yields the scripted records as `get` answers them, sleeping `intervalMs` between, until a final or escalated one. */
  async *watch(operationId: string, options: WatchOptions = {}): AsyncGenerator<OperationRecord> {
    this.seen('watch', operationId);
    let last = '';
    for (let round = 0; ; round++) {
      if (round > 1_000) throw new Error('FakeClient.watch: no end in 1000 rounds');
      const r = await this.get(operationId);
      if (options.includeUnchanged || JSON.stringify(r) !== last) yield r;
      last = JSON.stringify(r);
      if (FINAL_STATES.includes(r.localState) || (!options.untilFinal && r.localState === 'escalated')) return;
      if (this.executionStatus !== 'RUNNING') {
        const failure = {
          executionStatus: this.executionStatus,
          type: this.failure?.type ?? null,
          message: this.failure?.message ?? 'terminated by test',
        };
        throw new OperationFailedError(operationId, failure.message, { cause: new Error(failure.message), failure });
      }
      await this.sleep(options.intervalMs ?? 1000);
    }
  }
  async list(options: ListOptions): Promise<OperationListing[]> {
    this.calls.push({ method: 'list', args: [options] });
    const startedAt = new Date(T0).toISOString();
    return [
      {
        operationId: 'op-1',
        state: 'escalated',
        reason: 'rate_limited',
        provider: 'rest',
        jobId: 'J-9',
        executionStatus: 'RUNNING',
        startedAt,
      },
      {
        operationId: 'op-2',
        state: 'escalated',
        reason: 'deadline_exceeded',
        provider: 'lro',
        jobId: null,
        executionStatus: 'COMPLETED',
        startedAt,
      },
    ];
  }
  async readResult(operationId: string): Promise<VerifiedResultStream> {
    this.seen('readResult', operationId);
    const stream = new VerifiedResultStream(operationId, this.recordedResult);
    stream.end(this.resultBytes);
    return stream;
  }
  async describeOperation(operationId: string): Promise<OperationDescription> {
    this.seen('describeOperation', operationId);
    return {
      operationId,
      runId: 'run-1',
      executionStatus: this.executionStatus,
      startedAt: new Date(T0).toISOString(),
      closedAt: null,
      localState: 'observing',
      provider: 'rest',
      jobId: 'J-1',
      escalationReason: null,
      resultDeadlineAt: null,
      requestFingerprint: 'sha256:ab',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      failure: this.failure,
    };
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** In-memory deps around a fake client. `files` answers `readFile`. */
export function fakeDeps(
  client: FakeClient,
  options: { isTTY?: boolean; files?: Record<string, string>; connectError?: unknown } = {},
) {
  const out: string[] = [];
  const err: string[] = [];
  let now = T0;
  const sleeps: number[] = [];
  const delegated: { command: string; argv: string[] }[] = [];
  const bytes: Buffer[] = [];
  const deps: CliDeps = {
    connect: async () => {
      if (options.connectError) throw options.connectError;
      return client;
    },
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    stdoutBytes: new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes.push(chunk);
        done();
      },
    }),
    isTTY: options.isTTY ?? false,
    readFile: (path) => {
      const text = options.files?.[path];
      if (text === undefined) throw new Error(`ENOENT: no such file, open '${path}'`);
      return text;
    },
    nowMs: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    runAudit: async (argv) => (delegated.push({ command: 'audit', argv }), 0),
    runMcp: async (argv) => (delegated.push({ command: 'mcp', argv }), 0),
    runSimulate: async (argv) => (delegated.push({ command: 'simulate', argv }), 0),
    runDoctor: async (argv) => (delegated.push({ command: 'doctor', argv }), 0),
    runWorker: async () => (delegated.push({ command: 'worker', argv: [] }), 0),
    runDev: async () => (delegated.push({ command: 'dev', argv: [] }), 0),
  };
  client.sleep = (ms) => deps.sleep(ms);
  return {
    deps,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
    /** What was written to stdout as bytes (`asyncjob result`). */
    stdoutBytes: () => Buffer.concat(bytes),
    /** Every stdout line parsed as JSON. */
    json: () =>
      out
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    sleeps,
    delegated,
  };
}
