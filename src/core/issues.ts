/**
 * One rendering of validation problems for messages: `field.path: message; other: message`. Pure.
 */

/** A validation problem as zod reports it. */
export interface ValidationIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** Joins validation problems into one line, each naming its field (`(input)` for the value itself). */
export function issueText(issues: readonly ValidationIssue[], root = '(input)'): string {
  return issues.map((i) => `${i.path.map(String).join('.') || root}: ${i.message}`).join('; ');
}
