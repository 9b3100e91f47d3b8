/**
 * A workflow history saved to a file, as `temporal workflow show --output json` writes it, read for
 * `asyncjob replay-check --history FILE`: the workflow ID it is replayed under comes from its first event (the
 * server records it there).
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { History } from '@temporalio/worker';
import { WORKFLOW_TYPE } from '../client/context';
import type { ReplayHistory } from './replay-check';

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
  const workflowId = started.workflowId;
  if (!workflowId) return { problem: `${file}: its first event names no workflow ID` };
  return { workflowId, runId: started.originalExecutionRunId || null, file, history };
}
