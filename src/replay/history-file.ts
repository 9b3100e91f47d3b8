/**
 * A workflow history saved to a file, as `temporal workflow show --output json` writes it, read for
 * `asyncjob replay-check --history FILE`: the workflow ID it is replayed under comes from its first event (the
 * server records it there; older histories have it only in the workflow's input, as the operation's ID).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { History } from '@temporalio/worker';
import { WORKFLOW_TYPE } from '../client/context';
import type { ReplayHistory } from './replay-check';

type StartedAttributes = NonNullable<
  NonNullable<NonNullable<History['events']>[number]>['workflowExecutionStartedEventAttributes']
>;

/** The operation ID in the workflow's input (`{ request: { operationId } }`), if it reads as one. */
function operationIdInInput(started: StartedAttributes): string | undefined {
  const payload = started.input?.payloads?.[0];
  if (!payload) return undefined;
  try {
    const input = defaultPayloadConverter.fromPayload<{ request?: { operationId?: unknown } }>(payload);
    const id = input?.request?.operationId;
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  } catch {
    // Encoded by a codec this process does not have, or not our input: the caller says so.
    return undefined;
  }
}

/**
 * Reads a history from `text` (the file's contents) as a replay needs it. A file that is not the history of an
 * AsyncJobWorkflow run is a problem: one line naming `file`.
 */
export function historyFromFile(file: string, text: string): ReplayHistory | { problem: string } {
  const shape = 'a workflow history as "temporal workflow show --output json" writes it';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: `${file}: not JSON (${shape} is needed)` };
  }
  let history: History;
  try {
    history = historyFromJSON(json);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return { problem: `${file}: not ${shape} (${why})` };
  }
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) return { problem: `${file}: its first event is not the workflow's start (a whole history is needed)` };
  const type = started.workflowType?.name;
  if (type !== WORKFLOW_TYPE)
    return { problem: `${file}: the history of a ${type ?? 'nameless'} workflow, not ${WORKFLOW_TYPE}` };
  const workflowId = started.workflowId || operationIdInInput(started);
  if (!workflowId) return { problem: `${file}: names no workflow ID, and its input names no operation ID` };
  return { workflowId, runId: started.originalExecutionRunId || null, file, history };
}
