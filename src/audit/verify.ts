/**
 * Formats an audit report (`asyncjob audit verify`): a text report naming every finding (operation and first bad
 * sequence or missing range, or the checkpoint; the problem; expected; found), the signatures that could not be
 * checked, and a summary line; and a stable JSON shape. Pure.
 */
import { type AuditCounts, type AuditReport } from './auditor';
import { findingPlace, PROBLEM_DESCRIPTIONS, type AuditFinding } from './findings';

/**
 * The stable JSON shape of `asyncjob audit verify --json` (schema `asyncjob.audit-verify/v1`). Fields are only
 * ever added, never renamed or removed; `breaks` holds every finding (chain breaks and the kinds added since).
 */
export interface AuditVerifyJson {
  readonly schema: 'asyncjob.audit-verify/v1';
  readonly ok: boolean;
  /** Whether hashes were checked as HMAC-SHA256 with a key given outside the database. */
  readonly keyed: boolean;
  /** The public ID of that key (never the key). */
  readonly keyId: string | null;
  readonly operationsChecked: number;
  readonly entriesChecked: number;
  readonly breaks: readonly AuditFinding[];
  /** Signatures that could not be checked (their key is not configured); `ok` is false when any. */
  readonly unverifiable: readonly string[];
  readonly notes: readonly string[];
  readonly counts: AuditCounts;
}

/** The JSON form of a report. */
export function verifyJson(report: AuditReport, keyId: string | null): AuditVerifyJson {
  return {
    schema: 'asyncjob.audit-verify/v1',
    ok: report.findings.length === 0 && report.unverifiable.length === 0,
    keyed: keyId !== null,
    keyId,
    operationsChecked: report.counts.operationsChecked,
    entriesChecked: report.counts.entriesChecked,
    breaks: report.findings,
    unverifiable: report.unverifiable,
    notes: report.notes,
    counts: report.counts,
  };
}

/** One text block for a finding. */
export function formatBreak(f: AuditFinding): string {
  return `BROKEN ${findingPlace(f)}: ${f.problem}: ${PROBLEM_DESCRIPTIONS[f.problem]}\n  expected ${f.expected}\n  found    ${f.found}`;
}

function details(c: AuditCounts): string {
  const parts: string[] = [];
  if (c.snapshotsChecked > 0) parts.push(`${c.snapshotsChecked} snapshots`);
  if (c.artifactFilesChecked + c.artifactFilesUnreachable + c.artifactFilesMissingAllowed > 0) {
    const missing =
      c.artifactFilesMissingAllowed > 0
        ? `, ${c.artifactFilesMissingAllowed} missing (allowed: --allow-missing-artifacts)`
        : '';
    parts.push(
      `${c.artifactFilesChecked} artifact files hashed${c.artifactFilesUnreachable > 0 ? `, ${c.artifactFilesUnreachable} not reachable from here` : ''}${missing}`,
    );
  }
  const gone = c.temporalNotRetained;
  if (c.temporalWitnessed + gone.length > 0)
    parts.push(
      `${c.temporalWitnessed} histories read from Temporal${gone.length > 0 ? `, not retained: ${gone.length} (${gone.slice(0, 5).join(', ')}${gone.length > 5 ? ', ...' : ''})` : ''}`,
    );
  return parts.length === 0 ? '' : `\n  also checked: ${parts.join('; ')}`;
}

/** The text report: findings, unverifiable signatures, notes, then a summary line. */
export function formatVerifyText(report: AuditReport, keyId: string | null): string {
  const lines = report.findings.map(formatBreak);
  for (const u of report.unverifiable) lines.push(`UNCHECKED: ${u}`);
  for (const n of report.notes) lines.push(`note: ${n}`);
  const c = report.counts;
  const scope = `${c.operationsChecked} operation${c.operationsChecked === 1 ? '' : 's'}, ${c.entriesChecked} entr${c.entriesChecked === 1 ? 'y' : 'ies'}`;
  const how = keyId === null ? 'SHA-256' : `HMAC-SHA256, key ${keyId}`;
  if (report.findings.length > 0) {
    lines.push(
      `FAILED: ${report.findings.length} finding${report.findings.length === 1 ? '' : 's'} in ${scope} checked (${how})`,
    );
  } else if (report.unverifiable.length > 0) {
    lines.push(
      `CANNOT VERIFY: ${scope} checked (${how}); no change found, but the signatures above could not be checked`,
    );
  } else {
    lines.push(`ok: ${scope} checked (${how}), every chain intact${details(c)}`);
  }
  return `${lines.join('\n')}\n`;
}
