/**
 * Formats the result of `OperationStore.verifyChains` (T2) for `asyncjob audit verify`: a text report naming
 * every broken link (operation, sequence, problem, expected, found), and a stable JSON shape. Pure.
 */
import { type ChainBreak, type ChainProblem, type ChainVerification } from '../adapters/store/chain';

/** What each problem means, for the text report. */
export const CHAIN_PROBLEM_DESCRIPTIONS: Readonly<Record<ChainProblem, string>> = {
  hash_mismatch: 'the entry was changed after it was written (its hash no longer matches its content)',
  prev_link_mismatch: 'the entry no longer links to the entry before it (an earlier entry was rewritten or replaced)',
  gap: 'an entry is missing (deleted) before this sequence',
  missing_head: 'the chain ends before the recorded head (entries were deleted from the end) or the head record is missing',
};

/**
 * The stable JSON shape of `asyncjob audit verify --json` (schema `asyncjob.audit-verify/v1`). Fields are only
 * ever added, never renamed or removed.
 */
export interface AuditVerifyJson {
  readonly schema: 'asyncjob.audit-verify/v1';
  readonly ok: boolean;
  /** Whether hashes were checked as HMAC-SHA256 with a key given outside the database. */
  readonly keyed: boolean;
  readonly operationsChecked: number;
  readonly entriesChecked: number;
  readonly breaks: readonly ChainBreak[];
}

/** The JSON form of a verification. */
export function verifyJson(result: ChainVerification, keyed: boolean): AuditVerifyJson {
  return {
    schema: 'asyncjob.audit-verify/v1',
    ok: result.breaks.length === 0,
    keyed,
    operationsChecked: result.operationsChecked,
    entriesChecked: result.entriesChecked,
    breaks: result.breaks,
  };
}

/** One text line for a broken link. */
export function formatBreak(b: ChainBreak): string {
  return (
    `BROKEN operation ${b.operationId} at sequence ${b.sequence}: ${b.problem}: ${CHAIN_PROBLEM_DESCRIPTIONS[b.problem]}\n` +
    `  expected ${b.expected}\n  found    ${b.found}`
  );
}

/** The text report: one block per broken link, then a summary line. */
export function formatVerifyText(result: ChainVerification, keyed: boolean): string {
  const lines = result.breaks.map(formatBreak);
  const scope = `${result.operationsChecked} operation${result.operationsChecked === 1 ? '' : 's'}, ${result.entriesChecked} entr${result.entriesChecked === 1 ? 'y' : 'ies'}`;
  const how = keyed ? 'HMAC-SHA256' : 'SHA-256';
  lines.push(
    result.breaks.length === 0
      ? `ok: ${scope} checked (${how}), every chain intact`
      : `FAILED: ${result.breaks.length} broken chain${result.breaks.length === 1 ? '' : 's'} in ${scope} checked (${how})`,
  );
  return `${lines.join('\n')}\n`;
}
