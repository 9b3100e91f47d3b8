/**
 * `asyncjob audit verify`, as a function: every operation's chain, the columns and rows copied from it, its
 * decisions (how each was proven, D5), its snapshot, its artifacts (rows and reachable files), its webhook job
 * links, and what the witnesses saw (the checkpoints' anchors, Temporal's history). Read-only. The report names
 * each finding's operation and first bad sequence (or missing range); signatures that cannot be checked are listed
 * apart (`unverifiable`), never called changes.
 */
import type { ArtifactStore } from '../adapters/artifacts/artifact-store';
import { type AuditSource, type OperationAuditData } from '../adapters/store/audit-source';
import { verifyOperationRows, type ChainKey } from '../adapters/store/chain';
import { type JournalEntry } from '../core/journal';
import { checkArtifactFiles } from './artifact-files';
import { checkDecisionProofs } from './decision-proof';
import { type ResolvedCheckpoints } from './checkpoint-chain';
import { checkAnchors, checkWitness } from './coverage';
import { checkArtifactRows, checkJobLinks, checkJournalColumns, checkSnapshot } from './facts';
import { fromChainBreak, opFinding, tableFinding, type AuditFinding } from './findings';
import { keyNotConfigured } from './keys';
import { hasCode } from '../core/errors';
import { type TemporalWitness, type WitnessedOperation } from './temporal-witness';

/** What to verify and against what. */
export interface AuditOptions {
  readonly operationId?: string;
  readonly key?: ChainKey;
  readonly checkpoints: ResolvedCheckpoints;
  readonly witness?: TemporalWitness;
  /** How long to wait before re-reading a snapshot that lags its journal (an append in flight). Default 1500 ms. */
  readonly settleMs?: number;
  /** The artifact root on this host (`ASYNCJOB_ARTIFACTS_DIR`): a file missing under it is a finding. */
  readonly artifactRoot?: string;
  /** Deliberate retention: artifact files gone from this host are counted and named in a note, not findings. */
  readonly allowMissingArtifacts?: boolean;
  /** The object store configured here (`ASYNCJOB_ARTIFACTS`): its artifacts are fetched and hashed too. */
  readonly artifactObjects?: ArtifactStore;
}

/** Counts beside the findings. */
export interface AuditCounts {
  operationsChecked: number;
  entriesChecked: number;
  snapshotsChecked: number;
  artifactFilesChecked: number;
  artifactFilesUnreachable: number;
  /** Artifact files gone from this host, allowed by `--allow-missing-artifacts` (absent otherwise: findings). */
  artifactFilesMissingAllowed: number;
  temporalWitnessed: number;
  /** Operations whose Temporal history is no longer retained (past retention, or deleted). */
  temporalNotRetained: string[];
}

/** The outcome of an audit. */
export interface AuditReport {
  readonly counts: AuditCounts;
  readonly findings: AuditFinding[];
  /** Why some signatures could not be checked (`cannot verify signatures: key X not configured`). */
  readonly unverifiable: string[];
  readonly notes: string[];
}

const emptyCounts = (): AuditCounts => ({
  operationsChecked: 0,
  entriesChecked: 0,
  snapshotsChecked: 0,
  artifactFilesChecked: 0,
  artifactFilesUnreachable: 0,
  artifactFilesMissingAllowed: 0,
  temporalWitnessed: 0,
  temporalNotRetained: [],
});

async function operationIds(source: AuditSource, options: AuditOptions, report: AuditReport): Promise<string[]> {
  if (options.operationId !== undefined) return [options.operationId];
  const ids = new Set(await source.operationIds());
  for (const id of options.checkpoints.anchors.keys()) ids.add(id);
  if (options.witness) for (const id of await witnessedIds(options.witness, report)) ids.add(id);
  return [...ids].sort();
}

/** The witness's operation IDs; none when it cannot list them (named in the report, and the rest still checked). */
async function witnessedIds(witness: TemporalWitness, report: AuditReport): Promise<string[]> {
  try {
    return await witness.operationIds();
  } catch (err) {
    if (!hasCode(err, 'ASYNCJOB_ERR_WITNESS_UNAVAILABLE')) throw err;
    report.unverifiable.push(err.message);
    return [];
  }
}

/**
 * What the witness saw of `id`: its entries, null when the history is no longer retained (counted and listed), or
 * undefined without a witness or when the server could not be read (named in the report; the store is still checked).
 */
async function readWitness(
  id: string,
  options: AuditOptions,
  report: AuditReport,
): Promise<WitnessedOperation | null | undefined> {
  if (!options.witness) return undefined;
  try {
    const witnessed = await options.witness.witness(id);
    if (witnessed === null) report.counts.temporalNotRetained.push(id);
    else report.counts.temporalWitnessed += 1;
    return witnessed;
  } catch (err) {
    if (!hasCode(err, 'ASYNCJOB_ERR_WITNESS_UNAVAILABLE')) throw err;
    report.unverifiable.push(err.message);
    return undefined;
  }
}

interface Outcome {
  behind: boolean;
}

/** Signatures that could not be checked, by key ID, summarised into one line per key at the end. */
type Unchecked = Map<string | null, { operations: string[]; first: string; snapshots: number }>;

function noteUnchecked(unchecked: Unchecked, keyId: string | null, operationId: string, what: string): void {
  const held = unchecked.get(keyId) ?? { operations: [], first: what, snapshots: 0 };
  if (what === 'snapshot') held.snapshots += 1;
  else held.operations.push(operationId);
  unchecked.set(keyId, held);
}

function uncheckedLines(unchecked: Unchecked): string[] {
  return [...unchecked].map(([keyId, u]) => {
    const ops =
      u.operations.length === 0
        ? ''
        : `the entries of ${u.operations.length} operation${u.operations.length === 1 ? '' : 's'} (${u.operations.slice(0, 3).join(', ')}${u.operations.length > 3 ? ', ...' : ''})`;
    const snaps = u.snapshots === 0 ? '' : `${u.snapshots} snapshot${u.snapshots === 1 ? '' : 's'}`;
    return `${keyNotConfigured(keyId, 'chain')}: ${[ops, snaps].filter(Boolean).join(' and ')} not checked`;
  });
}

async function auditOperation(
  data: OperationAuditData,
  options: AuditOptions,
  report: AuditReport,
  unchecked: Unchecked,
): Promise<Outcome> {
  const id = data.operationId;
  const { counts, findings } = report;
  const anchors = options.checkpoints.anchors.get(id) ?? [];
  const witnessed = await readWitness(id, options, report);
  const anything = data.row !== null || data.journal.length > 0;
  if (
    !anything &&
    data.artifacts.length === 0 &&
    data.jobLinks.length === 0 &&
    anchors.length === 0 &&
    (witnessed?.reached ?? 0) === 0
  )
    return { behind: false };
  counts.operationsChecked += 1;
  if (!anything && anchors.length === 0 && (witnessed?.reached ?? 0) === 0) {
    findings.push(
      opFinding(
        id,
        1,
        'operation_missing',
        'its journal and operation row',
        `none, but ${data.artifacts.length} artifact rows and ${data.jobLinks.length} job links remain`,
      ),
    );
    return { behind: false };
  }
  findings.push(...checkAnchors(id, data.journal, anchors));
  if (witnessed) findings.push(...checkWitness(id, data.journal, witnessed));
  if (!anything) return { behind: false };
  const head = data.row === null ? null : { lastSequence: data.row.lastSequence, lastHash: data.row.lastHash };
  const chain = verifyOperationRows(id, data.journal, head, options.key);
  counts.entriesChecked += chain.entriesChecked;
  if (chain.break) findings.push(fromChainBreak(chain.break));
  if (chain.unverifiable)
    noteUnchecked(unchecked, chain.unverifiable.keyId, id, `from sequence ${chain.unverifiable.sequence}`);
  const entries: JournalEntry[] = data.journal.flatMap((r) => (r.entry === null ? [] : [r.entry]));
  const column = checkJournalColumns(id, data.journal);
  if (column) findings.push(column);
  findings.push(...checkDecisionProofs(id, entries));
  let behind = false;
  if (data.row !== null) {
    const journalHead = data.journal.at(-1)?.sequence ?? 0;
    const snapshot = checkSnapshot(id, data.row, entries, journalHead, options.key, chain.verified > 0);
    findings.push(...snapshot.findings);
    behind = snapshot.behind;
    if (snapshot.hash !== 'none') counts.snapshotsChecked += 1;
    if (snapshot.hash === 'unverifiable') noteUnchecked(unchecked, snapshot.keyId ?? null, id, 'snapshot');
  }
  findings.push(...checkArtifactRows(id, entries, data.artifacts, new Set(data.journal.map((r) => r.sequence))));
  const files = await checkArtifactFiles(id, entries, {
    ...(options.artifactRoot !== undefined ? { root: options.artifactRoot } : {}),
    allowMissing: options.allowMissingArtifacts === true,
    ...(options.artifactObjects !== undefined ? { objects: options.artifactObjects } : {}),
  });
  counts.artifactFilesChecked += files.checked;
  counts.artifactFilesUnreachable += files.unreachable;
  counts.artifactFilesMissingAllowed += files.allowedMissing.length;
  findings.push(...files.findings, ...checkJobLinks(id, entries, data.row, data.jobLinks));
  return { behind };
}

/** A snapshot still behind its journal after the settle time is a finding (not an append in flight). */
async function settleLagging(
  source: AuditSource,
  ids: readonly string[],
  settleMs: number,
  findings: AuditFinding[],
): Promise<void> {
  if (ids.length === 0) return;
  if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
  for (const id of ids) {
    const data = await source.readOperation(id);
    const head = data.journal.at(-1)?.sequence ?? 0;
    const version = data.row?.version ?? 0;
    if ((data.row?.snapshot ?? null) !== null && version < head) {
      findings.push(
        opFinding(
          id,
          version + 1,
          'snapshot_behind',
          `a snapshot accounting for sequence ${head}`,
          `the snapshot accounts for ${version} (sequences ${version + 1}-${head} are not reflected)`,
          { through: head },
        ),
      );
    }
  }
}

/** Every append-only trigger the migrations installed must still be there, enabled and refusing. */
async function checkGuards(source: AuditSource, findings: AuditFinding[]): Promise<void> {
  for (const g of await source.appendOnlyGuards()) {
    if (g.state === 'ok') continue;
    const found =
      g.state === 'missing'
        ? 'none'
        : g.state === 'disabled'
          ? 'the trigger, disabled'
          : 'a trigger that does not refuse it';
    findings.push(
      tableFinding(
        g.table,
        'append_only_guard_missing',
        `trigger ${g.trigger} refusing ${g.change} of ${g.table}`,
        found,
      ),
    );
  }
}

/** Runs the whole verification. */
export async function runAudit(source: AuditSource, options: AuditOptions): Promise<AuditReport> {
  const report: AuditReport = {
    counts: emptyCounts(),
    findings: [...options.checkpoints.findings],
    unverifiable: [...options.checkpoints.unverifiable],
    notes: [...options.checkpoints.notes],
  };
  const lagging: string[] = [];
  const unchecked: Unchecked = new Map();
  await checkGuards(source, report.findings);
  for (const id of await operationIds(source, options, report)) {
    const outcome = await auditOperation(await source.readOperation(id), options, report, unchecked);
    if (outcome.behind) lagging.push(id);
  }
  report.unverifiable.push(...uncheckedLines(unchecked));
  if (report.counts.artifactFilesMissingAllowed > 0)
    report.notes.push(
      `${report.counts.artifactFilesMissingAllowed} artifact files are gone from this host, allowed by --allow-missing-artifacts (deliberate retention): their digests were not checked`,
    );
  await settleLagging(source, lagging, options.settleMs ?? 1500, report.findings);
  const newest = options.checkpoints.newest;
  if (newest !== null)
    report.notes.push(
      `held to checkpoint ${newest.sequence} (${newest.takenAt}): ${newest.operations} operations, ${newest.entries} entries`,
    );
  return report;
}
