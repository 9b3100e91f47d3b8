/**
 * The worker process's start-up check, made before anything is connected: the environment and everything it names
 * (the store, the providers, the decider policy), the payload keys and the prebuilt workflow bundle, every problem
 * at once (exit 2); the one line that says which decider policy the worker's operations keep, and the one that says
 * what the worker serves.
 */
import path from 'node:path';
import type { Logger } from '@temporalio/worker';
import { type LoadedPayloadCodecs, loadPayloadCodecs } from './codec/payload-keys';
import { type Config, ConfigError } from './config';
import type { DeciderPolicyInForce } from './core/decider-policy';
import { checkWorkerEnvironment, describeDeciderPolicy, NO_DECIDER_POLICY } from './doctor/environment';
import { checkWorkflowBundle, type WorkflowBundleStamp } from './workflow-bundle';

/** A prebuilt workflow bundle the worker runs (ASYNCJOB_WORKFLOW_BUNDLE), checked. */
interface CheckedBundle {
  codePath: string;
  stamp: WorkflowBundleStamp;
}

/** The payload keys (ASYNCJOB_PAYLOAD_KEYS), or the problems with them. */
async function checkPayloadKeys(env: NodeJS.ProcessEnv): Promise<{ loaded?: LoadedPayloadCodecs; problems: string[] }> {
  try {
    return { loaded: await loadPayloadCodecs(env), problems: [] };
  } catch (err) {
    if (err instanceof ConfigError) return { problems: err.problems };
    throw err;
  }
}

/**
 * The worker's start-up check: the environment and everything it names (`checkWorkerEnvironment`, the decider
 * policy read there once, the payload keys) and the workflow bundle ASYNCJOB_WORKFLOW_BUNDLE names, every problem
 * at once in one {@link ConfigError} (exit 2).
 */
export async function checkWorkerStart(env: NodeJS.ProcessEnv): Promise<{
  config: Config;
  bundle?: CheckedBundle;
  deciders?: DeciderPolicyInForce;
  payloads: LoadedPayloadCodecs;
}> {
  const file = env.ASYNCJOB_WORKFLOW_BUNDLE?.trim();
  const codePath = file ? path.resolve(file) : undefined;
  const [checked, bundle, keys] = await Promise.all([
    checkWorkerEnvironment(env).then(
      (environment) => ({ ...environment, problems: [] as string[] }),
      (err: unknown) => {
        if (err instanceof ConfigError) return { config: undefined, problems: err.problems };
        throw err;
      },
    ),
    codePath !== undefined ? checkWorkflowBundle(codePath) : undefined,
    checkPayloadKeys(env),
  ]);
  const problems = [...checked.problems, ...(bundle && 'problem' in bundle ? [bundle.problem] : []), ...keys.problems];
  if (problems.length > 0 || checked.config === undefined || !keys.loaded) throw new ConfigError(problems);
  return {
    config: checked.config,
    payloads: keys.loaded,
    ...(checked.deciders !== undefined ? { deciders: checked.deciders } : {}),
    ...(codePath !== undefined && bundle && 'stamp' in bundle ? { bundle: { codePath, stamp: bundle.stamp } } : {}),
  };
}

/** Says once at start which decider policy the worker's operations keep (D2), or warns that there is none. */
export function logDeciderPolicy(
  logger: Logger,
  file: string | undefined,
  deciders: DeciderPolicyInForce | undefined,
): void {
  if (deciders === undefined || file === undefined)
    logger.warn(`asyncjob worker: ${NO_DECIDER_POLICY.message}`, { fix: NO_DECIDER_POLICY.fix });
  else
    logger.info(`asyncjob worker: decider policy ${file}, ${describeDeciderPolicy(deciders)}`, {
      deciderPolicy: file,
      deciderPolicyDigest: deciders.digest,
    });
}

/** Says once at start what the worker serves: its queue, providers, store, artifacts, workflows, Nexus endpoint. */
export function logServing(
  logger: Logger,
  config: Config,
  providers: string[],
  bundle: CheckedBundle | undefined,
): void {
  const storeShown = config.ASYNCJOB_STORE.replace(/\/\/[^@]*@/, '//***@');
  const artifactsShown = config.ASYNCJOB_ARTIFACTS ?? config.ASYNCJOB_ARTIFACTS_DIR;
  const nexusShown =
    config.ASYNCJOB_NEXUS_ENDPOINT !== undefined
      ? `, Nexus service asyncjob for endpoint ${config.ASYNCJOB_NEXUS_ENDPOINT}`
      : '';
  const workflowsShown = bundle
    ? `bundle ${bundle.codePath} (asyncjob ${bundle.stamp.asyncjob}, sources ${bundle.stamp.sources.slice(0, 19)})`
    : 'bundled from source';
  logger.info(
    `asyncjob worker: task queue ${config.ASYNCJOB_TASK_QUEUE}, providers ${providers.join(', ')}, store ${storeShown}, artifacts ${artifactsShown}, workflows ${workflowsShown}${nexusShown}`,
    {
      taskQueue: config.ASYNCJOB_TASK_QUEUE,
      providers,
      store: storeShown,
      artifacts: artifactsShown,
      providerCallSlots: config.ASYNCJOB_PROVIDER_CALL_SLOTS,
      maxCachedWorkflows: config.ASYNCJOB_MAX_CACHED_WORKFLOWS,
      ...(config.ASYNCJOB_NEXUS_ENDPOINT !== undefined ? { nexusEndpoint: config.ASYNCJOB_NEXUS_ENDPOINT } : {}),
      ...(bundle ? { workflowBundle: bundle.codePath, workflowSources: bundle.stamp.sources } : {}),
    },
  );
}
