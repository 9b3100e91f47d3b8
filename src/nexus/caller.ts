/**
 * Who calls through Nexus: the calling workflow Temporal names in the request's inbound links, as the identity
 * asyncjob records (`workflow:<namespace>/<workflow ID>`, `core/actor.ts`). A caller's identity is taken from
 * what Temporal tells us, never from what the caller writes: an identity given in the input is accepted only
 * when the request names no calling workflow, or when it names that same workflow.
 */
import type { Link } from 'nexus-rpc';
import { convertNexusLinkToWorkflowEventLink } from '@temporalio/nexus/lib/link-converter';
import { isWorkflowCaller, sameActor, workflowActor } from '../core/actor';

/** The Nexus link type of a workflow history event (the caller's `NexusOperationScheduled`). */
const WORKFLOW_EVENT_LINK = 'temporal.api.common.v1.Link.WorkflowEvent';

/**
 * The calling workflow's identity, from the first workflow event link of the request, or undefined when the
 * request names none (a call from outside a workflow). Pure.
 */
export function callerOfLinks(links: readonly Link[]): string | undefined {
  for (const link of links) {
    if (link.type !== WORKFLOW_EVENT_LINK) continue;
    try {
      const event = convertNexusLinkToWorkflowEventLink(link);
      if (event.namespace && event.workflowId) return workflowActor(event.namespace, event.workflowId);
    } catch {
      // A link we cannot read names no caller; the next one may.
    }
  }
  return undefined;
}

/** The identity recorded for a Nexus request, or the issue with the field that gave it. */
export type CallerIdentity =
  /** The identity to record: the caller's, or the input's as given (checked with the rest of the input). */
  { kind: 'ok'; actor: unknown } | { kind: 'refused'; path: string; message: string };

/**
 * The identity a Nexus request acts as: the calling workflow when the links name one (the input's `field` may
 * repeat it, in any spelling of the same identity, but not name another), else what the input gives (checked
 * later with the rest of the input; undefined when absent). Pure.
 */
export function callerIdentity(caller: string | undefined, given: unknown, field: string): CallerIdentity {
  if (caller === undefined && isWorkflowCaller(given))
    return {
      kind: 'refused',
      path: field,
      message: 'the request names no calling workflow: a workflow: identity is taken only from its Nexus link',
    };
  if (caller === undefined) return { kind: 'ok', actor: given };
  if (given === undefined || (typeof given === 'string' && sameActor(given, caller)))
    return { kind: 'ok', actor: caller };
  return {
    kind: 'refused',
    path: field,
    message: `the caller is ${caller} (from the Nexus request's links); leave ${field} out or give that identity`,
  };
}
