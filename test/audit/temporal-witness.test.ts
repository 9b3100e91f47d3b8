import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { type AuditJournalRow } from '../../src/adapters/store/audit-source';
import { checkWitness } from '../../src/audit/coverage';
import { emptyWitness, witnessFromHistory, type WitnessedOperation } from '../../src/audit/temporal-witness';
import { journalEntrySchema } from '../../src/core/journal';

function historyOf(file: string) {
  return historyFromJSON(JSON.parse(readFileSync(join(__dirname, '..', 'histories', file), 'utf8')));
}

/** The operation a recorded history ran: its workflow input's operation ID. */
function operationOf(file: string): string {
  const started = historyOf(file).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return (JSON.parse(Buffer.from(started ?? new Uint8Array()).toString('utf8')) as { request: { operationId: string } })
    .request.operationId;
}

const OPERATION = operationOf('happy-rest.json');

function recorded(file: string): WitnessedOperation {
  const history = historyOf(file);
  const seen = emptyWitness();
  expect(witnessFromHistory(history, OPERATION, seen)).toBeUndefined();
  return seen;
}

/** The store's rows as an honest store would hold them: the witnessed entries, other kinds as opaque rows. */
function rowsFor(seen: WitnessedOperation): AuditJournalRow[] {
  return Array.from({ length: seen.reached }, (_, i) => {
    const sequence = i + 1;
    const w = seen.entries.get(sequence);
    const entry =
      w === undefined
        ? null
        : journalEntrySchema.parse({ operationId: OPERATION, sequence, at: w.at, actor: w.actor, body: w.body });
    return {
      sequence,
      entry,
      prevHash: '',
      hash: '',
      keyId: null,
      columns: {
        at: '',
        actor: '',
        kind: '',
        toState: null,
        remoteJobId: null,
        httpStatus: null,
        delaySource: null,
        escalationReason: null,
      },
    };
  });
}

describe('Temporal history as a witness (--with-temporal)', () => {
  it('reads what a recorded run saw: how far the journal reached and the provider calls of each step', () => {
    const seen = recorded('happy-rest.json');
    expect(seen.reached).toBeGreaterThanOrEqual(10);
    const bodies = [...seen.entries.values()].map((e) => e.body as { kind: string; action?: string });
    expect(bodies.filter((b) => b.kind === 'observation' && b.action === 'status').length).toBeGreaterThanOrEqual(3);
    expect(bodies.some((b) => b.kind === 'transition')).toBe(true);
    // The first transition, recorded with the intent by the provider lookup, is witnessed by its marker.
    expect(seen.entries.get(2)?.body).toMatchObject({ kind: 'transition', from: null, to: 'create_pending' });
    expect(emptyWitness().reached).toBe(0);
    const other = emptyWitness();
    witnessFromHistory(
      historyFromJSON(JSON.parse(readFileSync(join(__dirname, '..', 'histories', 'happy-rest.json'), 'utf8'))),
      'op-someone-else',
      other,
    );
    expect(other.reached).toBe(0);
  });

  it('an intact store agrees; a cut tail, a changed observation and a vanished operation are found', () => {
    const seen = recorded('happy-rest.json');
    const rows = rowsFor(seen);
    expect(checkWitness(OPERATION, rows, seen)).toEqual([]);
    expect(checkWitness(OPERATION, rows.slice(0, -2), seen)).toEqual([
      expect.objectContaining({
        operationId: OPERATION,
        sequence: seen.reached - 1,
        through: seen.reached,
        problem: 'temporal_missing',
      }),
    ]);
    const status = [...seen.entries.values()].find((e) => (e.body as { action?: string }).action === 'status')!;
    const edited = rows.map((r) =>
      r.sequence === status.sequence
        ? { ...r, entry: { ...r.entry!, body: { ...r.entry!.body, httpStatus: 500 } as never } }
        : r,
    );
    expect(checkWitness(OPERATION, edited, seen)).toEqual([
      expect.objectContaining({ sequence: status.sequence, problem: 'temporal_mismatch' }),
    ]);
    expect(checkWitness(OPERATION, [], seen)).toEqual([
      expect.objectContaining({ sequence: 1, through: seen.reached, problem: 'operation_missing' }),
    ]);
  });
});
