/**
 * What the Temporal Web UI shows of an operation's run before anyone opens its history: the summary line of the
 * workflow list and the details of the run's page (Temporal's user metadata, set once at the start). Identities
 * only, never the payload or variables: they may be sensitive, and the metadata is not encrypted. Pure.
 */
import type { StartRequest } from './start-request';

/** The run's one-line summary: the provider and the operation ID. */
export function runSummary(request: Pick<StartRequest, 'provider' | 'operationId'>): string {
  return `asyncjob ${request.provider} ${request.operationId}`;
}

/** The run's details: who started it (a calling workflow names its namespace and ID) and who authorised it. */
export function runDetails(request: Pick<StartRequest, 'startedBy' | 'authorisedBy'>): string {
  return `Started by \`${request.startedBy}\`, authorised by \`${request.authorisedBy}\`.`;
}
