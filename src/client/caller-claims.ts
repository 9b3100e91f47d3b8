/**
 * The client's front door refuses a calling workflow's identity (`workflow:<namespace>/<ID>`) written by its caller
 * (a service, the CLI, an agent's tool): asyncjob records one only from what Temporal says of the caller, a parent
 * workflow (`asyncjob/workflow`) or a Nexus request's link (N1, N4). Otherwise a client could start an operation as
 * a workflow that never asked for it, and a caller workflow could then join it.
 */
import { isWorkflowCaller } from '../core/actor';
import { AsyncJobInputError, type InputIssue } from './errors';

/** Throws {@link AsyncJobInputError} naming each of `fields` that holds a calling workflow's identity. */
export function refuseClaimedCallers(fields: Record<string, unknown>): void {
  const issues: InputIssue[] = Object.entries(fields)
    .filter(([, value]) => isWorkflowCaller(value))
    .map(([path]) => ({
      path,
      message:
        'a calling workflow (workflow:) is named by Temporal, never by its caller: run the operation from that ' +
        'workflow (asyncjob/workflow, or Nexus runJob) or give your own identity',
    }));
  if (issues.length > 0) throw new AsyncJobInputError(issues);
}
