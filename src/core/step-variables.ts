/**
 * The operation variables against the adapter's declarations, in the workflow right after the provider's facts
 * are read and before anything is sent (C5): the record takes the values with the adapter's defaults applied, or
 * the operation ends `failed`, refused with `ASYNCJOB_ERR_INVALID_VARIABLE` and every issue journalled. Pure.
 */
import { type OperationRecord } from './operation';
import {
  checkOperationVariables,
  type OperationVariables,
  type VariableDeclarations,
  type VariableIssue,
} from './operation-variables';
import { Builder, type StepContext, type StepResult } from './step-draft';

/** The result of {@link settleVariables}. */
export type VariablesSettled = { kind: 'ok'; record: OperationRecord } | { kind: 'refused'; issues: VariableIssue[] };

/** The record with `values` as its variables (none: no field). */
function withVariables(record: OperationRecord, values: OperationVariables): OperationRecord {
  const next: OperationRecord = { ...record, variables: values };
  if (Object.keys(values).length === 0) delete next.variables;
  return next;
}

/**
 * Checks the variables the caller gave against the adapter's declarations (`declared` absent: it declares none).
 * On success the record holds the values with defaults applied; otherwise every issue, for
 * {@link refuseVariables} once the intent is recorded. Safe to repeat.
 */
export function settleVariables(
  record: OperationRecord,
  declared: VariableDeclarations | undefined,
  given: OperationVariables | undefined,
): VariablesSettled {
  const checked = checkOperationVariables(declared, given);
  return checked.ok
    ? { kind: 'ok', record: withVariables(record, checked.values) }
    : { kind: 'refused', issues: checked.issues };
}

/** The issues in one line, each naming its variable: `variables.a: why; variables.b: why`. */
function variableIssuesText(issues: readonly VariableIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}

/**
 * Ends a `create_pending` operation whose variables the adapter refuses (C5): `failed`, a local fact, with the
 * refusal (code and issues) on the record and the issues as the transition's reason. Only before any create was
 * reserved; after that the transition is refused and the step escalates instead (M1).
 */
export function refuseVariables(
  record: OperationRecord,
  issues: readonly VariableIssue[],
  ctx: StepContext,
): StepResult {
  const draft = new Builder(record, record);
  draft.apply(
    [
      {
        type: 'variables_refused',
        actor: ctx.actor,
        issues,
        reason: `ASYNCJOB_ERR_INVALID_VARIABLE: ${variableIssuesText(issues)}`,
      },
    ],
    ctx,
  );
  return draft.result();
}
