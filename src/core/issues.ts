/**
 * One rendering of validation problems for messages: `field.path: message; other: message`. Pure.
 */

/** A validation problem: its field as zod reports it (a path of keys) or already dotted, and why. */
export interface ValidationIssue {
  path: readonly PropertyKey[] | string;
  message: string;
}

const dotted = (path: ValidationIssue['path']): string =>
  typeof path === 'string' ? path : path.map(String).join('.');

/** Joins validation problems into one line, each naming its field (`root`, `(input)` unless named, for the value itself). */
export function issueText(issues: readonly ValidationIssue[], root = '(input)'): string {
  return issues.map((i) => `${dotted(i.path) || root}: ${i.message}`).join('; ');
}
