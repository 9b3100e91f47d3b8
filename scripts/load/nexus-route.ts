/**
 * The Nexus route of a load run: operations are started by caller workflows in a namespace of their own through
 * an endpoint made with the Temporal CLI (`ensureNexusSetup`, as docs/nexus.md shows), so every operation goes
 * through the `asyncjob` service's `runJob` as a Nexus caller's would. Its own checks, beside the run's: each
 * caller received the operation's own final state, and the operation's recorded starter is that caller (N4).
 */
import path from 'node:path';
import { Client, type Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, type NativeConnection, Worker } from '@temporalio/worker';
import type { AsyncJobClient } from '../../src/client';
import { workflowActor } from '../../src/core/actor';
import type { StartRequest } from '../../src/core/operation';
import { ensureNexusSetup } from '../../src/dev/nexus-setup';
import type { RunJobInput } from '../../src/nexus/service';
import type { OperationSummary } from '../../src/workflows/messages';
import type { LoadViolation } from './verify';

/** The callers' side of a run: their worker, and how to start and end one operation. */
export interface NexusRoute {
  /** Starts the caller of `request` (its `startedBy` left out: the caller is the starter). */
  start(request: StartRequest): Promise<void>;
  /** Waits for the caller of `operationId` and checks what it received against the operation's own summary. */
  check(operationId: string, summary: OperationSummary, client: AsyncJobClient): Promise<LoadViolation[]>;
  /** Waits for the caller of `operationId` (the operation exists once its caller's `runJob` started it). */
  ended(operationId: string): Promise<void>;
  close(): Promise<void>;
}

/** Where the asyncjob workers are. */
export interface NexusRouteTarget {
  address: string;
  namespace: string;
  taskQueue: string;
  runId: string;
  nativeConnection: NativeConnection;
  connection: Connection;
}

/** Makes the callers' namespace, the endpoint and the callers' worker. */
export async function openNexusRoute(target: NexusRouteTarget): Promise<NexusRoute> {
  const callerNamespace = 'asyncjob-load-callers';
  const endpoint = `asyncjob-load-${target.runId}`.replace(/[^A-Za-z0-9-]/g, '-');
  await ensureNexusSetup({
    address: target.address,
    callerNamespace,
    endpoint,
    targetNamespace: target.namespace,
    targetTaskQueue: target.taskQueue,
  });
  const taskQueue = `callers-${target.runId}`;
  const worker = await Worker.create({
    connection: target.nativeConnection,
    namespace: callerNamespace,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: path.join(__dirname, 'nexus-callers.ts'),
      logger: { log: () => {}, trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    }),
  });
  const running = worker.run();
  const callers = new Client({ connection: target.connection, namespace: callerNamespace });
  const handles = new Map<string, WorkflowHandle>();
  const callerId = (operationId: string): string => `caller-${operationId}`;
  return {
    async start(request) {
      const { startedBy: _caller, ...input } = request;
      const args: [RunJobInput, string] = [input, endpoint];
      handles.set(
        request.operationId,
        await callers.workflow.start('runThroughNexus', { workflowId: callerId(request.operationId), taskQueue, args }),
      );
    },
    async ended(operationId) {
      await handles.get(operationId)?.result();
    },
    async check(operationId, summary, client) {
      const violations: LoadViolation[] = [];
      const received = (await handles.get(operationId)?.result()) as OperationSummary | undefined;
      if (received?.localState !== summary.localState)
        violations.push({
          operationId,
          kind: 'nexus_mismatch',
          detail: `the caller received ${received?.localState ?? 'nothing'}, the operation ended ${summary.localState}`,
        });
      const starter = (await client.get(operationId)).authorisation.startedBy;
      const caller = workflowActor(callerNamespace, callerId(operationId));
      if (starter !== caller)
        violations.push({ operationId, kind: 'nexus_mismatch', detail: `recorded starter ${starter}, not ${caller}` });
      return violations;
    },
    async close() {
      worker.shutdown();
      await running.catch(() => undefined);
    },
  };
}
