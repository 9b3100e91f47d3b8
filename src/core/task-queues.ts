/**
 * The task queues of one deployment: its workflows' queue (`ASYNCJOB_TASK_QUEUE`), where its provider calls run too,
 * and, derived from it, one activity queue per provider, where a rate-limited provider's calls run (F9). Deriving the
 * provider queues from the deployment's queue keeps two deployments in
 * one namespace apart: a provider of the same name in each is two queues, so neither deployment's workers run the
 * other's provider calls with their own store, credentials and artifact root. Pure; shared by worker and client.
 */

/** The task queue asyncjob's workflows run on unless told otherwise. */
export const DEFAULT_TASK_QUEUE = 'asyncjob';

/**
 * The activity task queue of `provider`'s calls in the deployment whose workflows run on `deploymentQueue`:
 * `<deploymentQueue>-provider-<provider>` (`asyncjob-provider-rest` for the default deployment).
 */
export function providerTaskQueue(deploymentQueue: string, provider: string): string {
  return `${deploymentQueue}-provider-${provider}`;
}
