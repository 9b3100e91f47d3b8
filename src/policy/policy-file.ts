/**
 * The operator's policy file: one format for both policies asyncjob reads, YAML or JSON (`.json`), `version: 1`.
 * `agents` (with `authorisedBy` and `stdioIdentity`) is what `asyncjob mcp` lets each agent do (G1); `deciders` is
 * who may decide which escalations, with which keys (D2, D3), read by the worker. One file may hold both; each
 * reader validates its own section and checks the other's names nothing unknown.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { issueText } from '../core/issues';
import { AsyncJobError } from '../core/errors';

/** One problem with one field of a policy file. */
export interface PolicyIssue {
  path: string;
  message: string;
}

/** A policy file cannot be used; `issues` names every problem at once (never a token's value). */
export class PolicyFileError extends AsyncJobError {
  constructor(
    readonly source: string,
    readonly issues: PolicyIssue[],
    what = 'policy',
  ) {
    super('ASYNCJOB_ERR_POLICY_INVALID', `${what} ${source} is invalid: ${issueText(issues, '(file)')}`);
  }
}

/** The sections a policy file may have. */
export const POLICY_FILE_KEYS = ['version', 'authorisedBy', 'stdioIdentity', 'agents', 'deciders'] as const;

/** Reads and parses a policy file (`.json` as JSON, anything else as YAML); throws {@link PolicyFileError}. */
export function readPolicyDocument(
  file: string,
  readText: (file: string) => string = (path) => readFileSync(path, 'utf8'),
  what = 'policy',
): unknown {
  let text: string;
  try {
    text = readText(file);
  } catch (err) {
    throw new PolicyFileError(file, [{ path: '', message: `cannot read: ${(err as Error).message}` }], what);
  }
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const format = file.endsWith('.json') ? 'JSON' : 'YAML';
    throw new PolicyFileError(file, [{ path: '', message: `not valid ${format}: ${(err as Error).message}` }], what);
  }
}

/** Issues of a zod result, as policy issues. */
export function policyIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): PolicyIssue[] {
  return issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}
