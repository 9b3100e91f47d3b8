/**
 * What the CLI integration tests share: the documented `--json` shapes (docs/cli.md), strict so an undocumented
 * field fails a test, and a runner of `asyncjob` commands against a test client.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { z } from 'zod';
import { runAuditCommand } from '../../src/audit/cli';
import type { AsyncJobClient } from '../../src/client';
import type { CliDeps } from '../../src/cli/deps';
import { EXIT } from '../../src/cli/exit-codes';
import { runCli } from '../../src/cli/run-cli';
import type { StartRequest } from '../../src/core/operation';

const iso = z.string().datetime();
const offeredOption = z.object({ option: z.string(), label: z.string() }).passthrough();
/** Why the workflow refused an operation before anything was sent (rule C5). */
const refusal = z
  .object({ code: z.string(), issues: z.array(z.object({ path: z.string(), message: z.string() }).strict()) })
  .strict();
const operationView = z
  .object({
    operationId: z.string(),
    provider: z.string(),
    localState: z.string(),
    final: z.boolean(),
    jobId: z.string().nullable(),
    remote: z
      .object({
        state: z.string().nullable(),
        category: z.string().nullable(),
        progress: z.number().min(0).max(1).nullable(),
        observedAt: iso.nullable(),
      })
      .strict(),
    nextPollAt: iso.nullable(),
    delaySource: z.string().nullable(),
    statusRequests: z.object({ used: z.number().int(), allowed: z.number().int() }).strict(),
    deadlines: z.object({ createAt: iso, resultAt: iso, cancelAt: iso.nullable() }).strict(),
    escalation: z
      .object({ reason: z.string(), options: z.array(offeredOption), decisionDeadlineAt: iso })
      .strict()
      .nullable(),
    cancel: z
      .object({ requestedBy: z.string(), reason: z.string(), requestedAt: iso, sentAt: iso.nullable() })
      .strict()
      .nullable(),
    result: z
      .object({ validation: z.enum(['valid', 'invalid', 'not_checked']) })
      .passthrough()
      .nullable(),
    providerError: z.object({ code: z.string().nullable(), message: z.string().nullable() }).strict().nullable(),
    variables: z.record(z.string(), z.string()),
    refusal: refusal.nullable(),
    traceId: z.string(),
  })
  .strict();
const summary = z
  .object({
    operationId: z.string(),
    provider: z.string(),
    localState: z.string(),
    jobId: z.string().optional(),
    pollUrl: z.string().optional(),
    remoteState: z.string().optional(),
    providerError: z.object({ code: z.string().optional(), message: z.string().optional() }).strict().optional(),
    refusal: refusal.optional(),
    result: z.unknown(),
    escalation: z.object({ reason: z.string(), text: z.string() }).strict().nullable(),
    statusRequestsUsed: z.number().int(),
    statusRequestsAllowed: z.number().int(),
  })
  .strict();
const failure = z.object({ type: z.string().nullable(), message: z.string() }).strict();
export const startDoc = z
  .object({
    schema: z.literal('asyncjob.start/v1'),
    operationId: z.string(),
    runId: z.string(),
    joined: z.boolean(),
    requestFingerprint: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    traceId: z.string().regex(/^[0-9a-f]{32}$/),
    executionStatus: z.string(),
    replaced: failure.nullable(),
    failure: failure.nullable(),
    summary: summary.nullable(),
  })
  .strict();
const execution = z
  .object({
    operationId: z.string(),
    runId: z.string(),
    executionStatus: z.string(),
    startedAt: iso,
    closedAt: iso.nullable(),
    localState: z.string().nullable(),
    provider: z.string().nullable(),
    jobId: z.string().nullable(),
    escalationReason: z.string().nullable(),
    resultDeadlineAt: iso.nullable(),
    requestFingerprint: z.string().nullable(),
    traceId: z.string().nullable(),
    failure: failure.nullable(),
  })
  .strict();
export const statusDoc = z
  .object({
    schema: z.literal('asyncjob.status/v1'),
    operation: operationView.nullable(),
    execution,
    recordError: z.string().nullable(),
    final: z.boolean(),
  })
  .strict();
export const watchDoc = z.discriminatedUnion('event', [
  z
    .object({ schema: z.literal('asyncjob.watch/v1'), event: z.literal('update'), at: iso, operation: operationView })
    .strict(),
  z
    .object({
      schema: z.literal('asyncjob.watch/v1'),
      event: z.literal('end'),
      at: iso,
      operation: operationView.nullable(),
      workflowStatus: z.string().nullable(),
      failure: failure.nullable(),
      exitCode: z.number().int(),
    })
    .strict(),
]);
export const decideDoc = z.discriminatedUnion('action', [
  z
    .object({
      schema: z.literal('asyncjob.decide/v1'),
      operationId: z.string(),
      action: z.literal('show'),
      escalation: z
        .object({ reason: z.string(), text: z.string(), options: z.array(offeredOption), decisionDeadlineAt: iso })
        .strict()
        .nullable(),
    })
    .strict(),
  z
    .object({
      schema: z.literal('asyncjob.decide/v1'),
      operationId: z.string(),
      action: z.literal('decided'),
      option: z.string(),
      accepted: z.literal(true),
      localState: z.string(),
    })
    .strict(),
]);
export const cancelDoc = z
  .object({
    schema: z.literal('asyncjob.cancel/v1'),
    operationId: z.string(),
    accepted: z.literal(true),
    localState: z.string(),
  })
  .strict();
export const listDoc = z
  .object({
    schema: z.literal('asyncjob.list/v1'),
    operations: z.array(
      z
        .object({
          operationId: z.string(),
          state: z.string().nullable(),
          reason: z.string().nullable(),
          provider: z.string().nullable(),
          jobId: z.string().nullable(),
          executionStatus: z.string(),
          startedAt: iso,
        })
        .strict(),
    ),
    escalated: z
      .array(
        z
          .object({
            operationId: z.string(),
            reason: z.string().nullable(),
            provider: z.string().nullable(),
            jobId: z.string().nullable(),
            executionStatus: z.string(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();
export const errorDoc = z
  .object({
    schema: z.literal('asyncjob.error/v1'),
    code: z.string().regex(/^ASYNCJOB_ERR_[A-Z_]+$/),
    message: z.string(),
    exitCode: z.number().int(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .strict();

/** One run of the CLI: its exit code, stdout lines parsed as JSON (with --json), stdout and stderr. */
export interface CliRun {
  code: number;
  docs: unknown[];
  stdout: string;
  stderr: string;
}

/**
 * Runs `asyncjob <argv>` on a test client (connected already), with `env` as its environment when given (the
 * process's otherwise); nothing is written to the process's streams.
 */
export async function runOn(
  client: AsyncJobClient,
  argv: string[],
  env?: Readonly<Record<string, string>>,
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const deps: CliDeps = {
    // Closing it (as the CLI does) leaves a client made from outside open.
    connect: async () => client,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    isTTY: false,
    readFile: () => {
      throw new Error('no files in this test');
    },
    nowMs: () => Date.now(),
    sleep: (ms) => sleep(ms),
    runAudit: async () => EXIT.internal,
    runMcp: async () => EXIT.internal,
    runSimulate: async () => EXIT.internal,
    runWorker: async () => EXIT.internal,
    runDev: async () => EXIT.internal,
    ...(env !== undefined ? { env } : {}),
  };
  const code = await runCli(argv, deps);
  const stdout = out.join('');
  const docs = argv.includes('--json')
    ? stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown)
    : [];
  return { code, docs, stdout, stderr: err.join('') };
}

/** The `start` arguments of a start request. */
export function startArgs(request: StartRequest): string[] {
  const ms = (d: StartRequest['createDeadline']) =>
    'afterMs' in d ? `${d.afterMs}ms` : new Date(d.atMs).toISOString();
  return [
    'start',
    '--provider',
    request.provider,
    '--operation-id',
    request.operationId,
    '--payload',
    JSON.stringify(request.payload),
    '--started-by',
    request.startedBy,
    '--authorised-by',
    request.authorisedBy,
    '--create-deadline',
    ms(request.createDeadline),
    '--result-deadline',
    ms(request.resultDeadline),
    ...(request.policy ? ['--policy', JSON.stringify(request.policy)] : []),
  ];
}

/**
 * `asyncjob audit verify --operation ID --store sqlite:<storeFile> --with-temporal` against the test server, as a
 * worker on `taskQueue` wrote it: its exit code and everything it printed.
 */
export async function auditVerifyWithTemporal(
  operationId: string,
  storeFile: string,
  taskQueue: string,
): Promise<{ code: number; output: string }> {
  let output = '';
  const code = await runAuditCommand(
    ['verify', '--operation', operationId, '--store', `sqlite:${storeFile}`, '--with-temporal'],
    {
      stdout: (text) => (output += text),
      stderr: (text) => (output += text),
      env: {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        ASYNCJOB_TASK_QUEUE: taskQueue,
      },
      settleMs: 200,
    },
  );
  return { code, output };
}
