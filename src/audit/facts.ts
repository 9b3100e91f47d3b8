/**
 * Everything besides the chain that states a fact, checked against the hashed journal. Pure.
 *
 * - journal columns (at, actor, kind, to_state, remote_job_id, http_status, delay_source, escalation_reason) are
 *   copies derived from the hashed entry: recomputed and compared;
 * - the operations row: its columns against its snapshot, the snapshot against its hash, and the
 *   snapshot's facts recomputed from the journal entries it accounts for (`version`): state, provider, job,
 *   escalation, result, the intent's fingerprint, trace and people, and the deadlines and budgets as the intent set
 *   them and each decision's entry moved them (`bound-facts.ts`);
 * - the artifacts table against the artifact entries it copies; the webhook job links against the job IDs the
 *   operation named.
 */
import { type AuditJournalRow, type AuditJobLink, type AuditOperationRow } from '../adapters/store/audit-source';
import { type ChainKey } from '../adapters/store/chain';
import {
  columnsOf,
  operationSnapshotSchema,
  type OperationSnapshot,
  type StoredArtifact,
} from '../adapters/store/operation-store';
import { type JournalEntry } from '../core/journal';
import { boundFacts } from './bound-facts';
import { operationRecordSchema } from '../core/operation';
import { opFinding, type AuditFinding } from './findings';
import { snapshotHashVerdict, type SnapshotHashStatus } from './snapshot-signature';

const show = (v: unknown): string =>
  v === null || v === undefined ? 'none' : typeof v === 'string' ? v : JSON.stringify(v);

/** The first journal row whose query columns differ from the hashed entry they are copied from. */
export function checkJournalColumns(operationId: string, rows: readonly AuditJournalRow[]): AuditFinding | null {
  for (const row of rows) {
    if (row.entry === null) continue;
    const derived = { at: row.entry.at, actor: row.entry.actor, ...columnsOf(row.entry) };
    const stored: Record<string, unknown> = { ...row.columns };
    for (const column of [
      'at',
      'actor',
      'kind',
      'toState',
      'remoteJobId',
      'httpStatus',
      'delaySource',
      'escalationReason',
    ] as const) {
      if (stored[column] !== derived[column]) {
        return opFinding(
          operationId,
          row.sequence,
          'column_mismatch',
          `${column} = ${show(derived[column])} (from the hashed entry)`,
          `${column} = ${show(stored[column])}`,
        );
      }
    }
  }
  return null;
}

/** What the snapshot check found: findings, whether the snapshot lags the journal, and its hash status. */
export interface SnapshotVerdict {
  readonly findings: AuditFinding[];
  readonly behind: boolean;
  /** `unverifiable`: signed by a key not configured; `none`: no snapshot to check. */
  readonly hash: SnapshotHashStatus;
  readonly keyId?: string | null;
}

function rowColumnsAgree(operationId: string, row: AuditOperationRow, s: OperationSnapshot): AuditFinding | null {
  const pairs: Array<[string, unknown, unknown]> = [
    ['provider', s.provider, row.provider],
    ['local_state', s.localState, row.localState],
    [
      'remote_job_ids',
      JSON.stringify(s.remoteJobIds),
      row.remoteJobIds === null ? 'unreadable' : JSON.stringify(row.remoteJobIds),
    ],
    ['escalation_reason', s.escalationReason, row.escalationReason],
    [
      'result_deadline_at_ms',
      s.resultDeadlineAt === null ? null : Date.parse(s.resultDeadlineAt),
      row.resultDeadlineAtMs,
    ],
    ['updated_at', s.updatedAt, row.updatedAt],
    ['version', s.version, row.version],
  ];
  const bad = pairs.find(([, want, got]) => want !== got);
  return bad === undefined
    ? null
    : opFinding(
        operationId,
        s.version,
        'operation_row_mismatch',
        `${bad[0]} = ${show(bad[1])} (from the snapshot)`,
        `${bad[0]} = ${show(bad[2])}`,
      );
}

function last<K extends JournalEntry['body']['kind']>(
  entries: readonly JournalEntry[],
  kind: K,
): (JournalEntry & { body: Extract<JournalEntry['body'], { kind: K }> }) | undefined {
  for (let i = entries.length - 1; i >= 0; i--)
    if (entries[i]!.body.kind === kind)
      return entries[i] as JournalEntry & { body: Extract<JournalEntry['body'], { kind: K }> };
  return undefined;
}

/** [field, what the journal says, what the snapshot says, the entry that says it]; pure. */
function recomputed(s: OperationSnapshot, entries: readonly JournalEntry[]): Array<[string, unknown, unknown, number]> {
  const out: Array<[string, unknown, unknown, number]> = [];
  const transition = last(entries, 'transition');
  if (transition) out.push(['localState', transition.body.to, s.localState, transition.sequence]);
  const intent =
    entries[0]?.body.kind === 'intent' ? (entries[0] as JournalEntry & { body: { kind: 'intent' } }) : undefined;
  if (intent) out.push(['provider', intent.body.provider, s.provider, 1]);
  const named = new Set(
    entries.flatMap((e) =>
      (e.body.kind === 'transition' || e.body.kind === 'observation') && e.body.remoteJobId !== undefined
        ? [e.body.remoteJobId]
        : [],
    ),
  );
  const unknownJob = s.remoteJobIds.find((id) => !named.has(id));
  if (unknownJob !== undefined) out.push(['remoteJobIds', 'job IDs the journal named', unknownJob, s.version]);
  if (s.localState === 'escalated') {
    const escalation = last(entries, 'escalation');
    out.push([
      'escalationReason',
      escalation?.body.reason ?? null,
      s.escalationReason,
      escalation?.sequence ?? s.version,
    ]);
  }
  const parsed = operationRecordSchema.safeParse(s.record);
  if (!parsed.success)
    return [
      ...out,
      [
        'record',
        'an operation record',
        `one that does not parse (${parsed.error.issues[0]?.path.join('.') ?? ''})`,
        s.version,
      ],
    ];
  const r = parsed.data;
  out.push(
    ['record.operationId', s.operationId, r.operationId, s.version],
    ['record.localState', s.localState, r.localState, s.version],
  );
  out.push(
    ['record.journal.nextSequence', s.version + 1, r.journal.nextSequence, s.version],
    ['record.escalation', s.escalationReason, r.escalation?.reason ?? null, s.version],
  );
  out.push(['record.remote.jobIds', JSON.stringify(s.remoteJobIds), JSON.stringify(r.remote.jobIds), s.version]);
  if (transition) out.push(['record.jobId', transition.body.remoteJobId, r.jobId, transition.sequence]);
  if (intent) {
    const i = intent.body;
    out.push(
      ['record.provider', i.provider, r.provider, 1],
      ['record.requestFingerprint', i.requestFingerprint, r.requestFingerprint, 1],
      ['record.traceId', i.traceId, r.traceId, 1],
    );
    out.push(
      ['record.authorisation.startedBy', i.startedBy, r.authorisation.startedBy, 1],
      ['record.authorisation.authorisedBy', i.authorisedBy, r.authorisation.authorisedBy, 1],
    );
  }
  out.push(...boundFacts(entries, r, s.resultDeadlineAt));
  if (r.result?.sha256 !== undefined && r.result.artifactLocation !== undefined) {
    const res = r.result;
    const artifact = entries.find(
      (e) =>
        e.body.kind === 'artifact' &&
        e.body.sha256 === res.sha256 &&
        e.body.location === res.artifactLocation &&
        e.body.sizeBytes === res.sizeBytes,
    );
    if (artifact === undefined)
      out.push([
        'record.result',
        'an artifact entry with this digest, size and location',
        `${res.sha256} ${res.sizeBytes ?? '?'} bytes`,
        s.version,
      ]);
  }
  return out;
}

/**
 * Checks one operations row: its columns against its snapshot, the snapshot's hash, its version against the
 * journal's length (`journalHead`), and its facts recomputed from the entries up to its version. `chainVerified`:
 * whether the configured key verified entries of this operation's journal.
 */
export function checkSnapshot(
  operationId: string,
  row: AuditOperationRow,
  entries: readonly JournalEntry[],
  journalHead: number,
  key: ChainKey | undefined,
  chainVerified = false,
): SnapshotVerdict {
  if (row.snapshot === null) return { findings: [], behind: false, hash: 'none' };
  let snapshot: OperationSnapshot;
  try {
    snapshot = operationSnapshotSchema.parse(JSON.parse(row.snapshot));
  } catch {
    return {
      findings: [
        opFinding(operationId, row.version, 'snapshot_mismatch', 'a snapshot', 'text that no longer parses as one'),
      ],
      behind: false,
      hash: 'none',
    };
  }
  const { finding, hash } = snapshotHashVerdict({ operationId, row, version: snapshot.version, key, chainVerified });
  const findings: AuditFinding[] = finding ? [finding] : [];
  const columns = rowColumnsAgree(operationId, row, snapshot);
  if (columns) findings.push(columns);
  if (snapshot.operationId !== operationId)
    findings.push(
      opFinding(
        operationId,
        snapshot.version,
        'snapshot_mismatch',
        `operationId = ${operationId}`,
        `operationId = ${snapshot.operationId}`,
      ),
    );
  if (snapshot.version > journalHead) {
    // The journal lost its tail: that is the finding; recomputing from what is left would only echo it.
    findings.push(
      opFinding(
        operationId,
        journalHead + 1,
        'snapshot_ahead',
        `entries through sequence ${snapshot.version} (the snapshot accounts for them)`,
        `the journal ends at ${journalHead}`,
        { through: snapshot.version },
      ),
    );
    return { findings, behind: false, hash };
  }
  const accounted = entries.filter((e) => e.sequence <= snapshot.version);
  const bad = recomputed(snapshot, accounted).find(([, want, got]) => show(want) !== show(got));
  if (bad)
    findings.push(
      opFinding(
        operationId,
        bad[3],
        'snapshot_mismatch',
        `${bad[0]} = ${show(bad[1])} (from the journal)`,
        `${bad[0]} = ${show(bad[2])} (snapshot version ${snapshot.version})`,
      ),
    );
  return {
    findings,
    behind: snapshot.version < journalHead,
    hash,
    ...(hash === 'unverifiable' ? { keyId: row.snapshotKeyId } : {}),
  };
}

/**
 * The artifacts table against the artifact entries it copies: a row per artifact entry, equal to it, and no row
 * where the journal (`journalSequences`: every stored sequence, parsed or not) has no entry.
 */
export function checkArtifactRows(
  operationId: string,
  entries: readonly JournalEntry[],
  rows: readonly StoredArtifact[],
  journalSequences: ReadonlySet<number> = new Set(entries.map((e) => e.sequence)),
): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const bySequence = new Map(rows.map((r) => [r.sequence, r]));
  for (const e of entries) {
    if (e.body.kind !== 'artifact') continue;
    const row = bySequence.get(e.sequence);
    bySequence.delete(e.sequence);
    if (row === undefined) {
      findings.push(opFinding(operationId, e.sequence, 'artifact_row_missing', `a row for ${e.body.location}`, 'none'));
      continue;
    }
    const want: Record<string, unknown> = {
      location: e.body.location,
      sha256: e.body.sha256,
      size_bytes: e.body.sizeBytes,
      content_type: e.body.contentType ?? null,
      validation: e.body.validation,
      at: e.at,
    };
    const got: Record<string, unknown> = {
      location: row.location,
      sha256: row.sha256,
      size_bytes: row.sizeBytes,
      content_type: row.contentType,
      validation: row.validation,
      at: row.at,
    };
    const column = Object.keys(want).find((k) => want[k] !== got[k]);
    if (column !== undefined)
      findings.push(
        opFinding(
          operationId,
          e.sequence,
          'artifact_row_mismatch',
          `${column} = ${show(want[column])} (from the journal)`,
          `${column} = ${show(got[column])}`,
        ),
      );
  }
  const parsedSequences = new Set(entries.map((e) => e.sequence));
  for (const row of bySequence.values()) {
    if (parsedSequences.has(row.sequence)) {
      findings.push(
        opFinding(
          operationId,
          row.sequence,
          'artifact_row_mismatch',
          'an artifact entry at this sequence',
          `a row for ${row.location} beside a non-artifact entry`,
        ),
      );
    } else if (!journalSequences.has(row.sequence)) {
      findings.push(
        opFinding(
          operationId,
          row.sequence,
          'artifact_row_orphan',
          'a journal entry at this sequence',
          `none, but a row for ${row.location}`,
        ),
      );
    } // else: the entry no longer parses, which is the chain's finding
  }
  return findings;
}

/**
 * The webhook lookup's links against the job IDs the operation's journal or snapshot named: every link names such a
 * job at the operation's provider (else job_link_unsupported), and every job a journal entry named has its link
 * (the append writes it in the same transaction; else job_link_missing).
 */
export function checkJobLinks(
  operationId: string,
  entries: readonly JournalEntry[],
  row: AuditOperationRow | null,
  links: readonly AuditJobLink[],
): AuditFinding[] {
  const intent = entries[0]?.body.kind === 'intent' ? entries[0].body.provider : undefined;
  const provider = intent ?? row?.provider ?? undefined;
  const named = new Set<string>(row?.remoteJobIds ?? []);
  const findings: AuditFinding[] = [];
  const linked = new Set(links.map((l) => `${l.provider}\u0000${l.remoteJobId}`));
  for (const e of entries) {
    const jobId = columnsOf(e).remoteJobId;
    if (jobId === null) continue;
    named.add(jobId);
    if (provider !== undefined && findings.length === 0 && !linked.has(`${provider}\u0000${jobId}`))
      findings.push(
        opFinding(operationId, e.sequence, 'job_link_missing', `a link ${provider}/${jobId} -> ${operationId}`, 'none'),
      );
  }
  const bad = links.find((l) => !named.has(l.remoteJobId) || (provider !== undefined && l.provider !== provider));
  if (bad === undefined) return findings;
  const last = entries.at(-1)?.sequence ?? 1;
  return [
    ...findings,
    opFinding(
      operationId,
      last,
      'job_link_unsupported',
      `links to jobs of ${provider ?? 'its provider'} it named (${[...named].join(', ') || 'none'})`,
      `${bad.provider}/${bad.remoteJobId}`,
    ),
  ];
}
