import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { lastPublishedMayBeEscalated } from '../../src/client/history';

type Events = Parameters<typeof lastPublishedMayBeEscalated>[0];

const keyword = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const upsert = (fields: Record<string, Payload>) => ({
  upsertWorkflowSearchAttributesEventAttributes: { searchAttributes: { indexedFields: fields } },
});
const started = (fields?: Record<string, Payload>) => ({
  workflowExecutionStartedEventAttributes: fields ? { searchAttributes: { indexedFields: fields } } : {},
});
const state = (value: string) => ({ AsyncJobState: keyword(value) });
const other = { activityTaskCompletedEventAttributes: {} };

describe('a followed history batch may have escalated the operation only when its last published state says so', () => {
  it('no state published (plain events, a start without search attributes): not escalated', () => {
    expect(lastPublishedMayBeEscalated([other, started()] as Events)).toBe(false);
    expect(lastPublishedMayBeEscalated([] as Events)).toBe(false);
  });

  it('the last upsert decides, whatever came before it', () => {
    expect(lastPublishedMayBeEscalated([upsert(state('observing')), other] as Events)).toBe(false);
    expect(lastPublishedMayBeEscalated([upsert(state('observing')), upsert(state('escalated'))] as Events)).toBe(true);
    expect(lastPublishedMayBeEscalated([upsert(state('escalated')), other, upsert(state('observing'))] as Events)).toBe(
      false,
    );
  });

  it("a run's start carries its state (a run continued from an escalated one starts escalated)", () => {
    expect(lastPublishedMayBeEscalated([started(state('create_pending'))] as Events)).toBe(false);
    expect(lastPublishedMayBeEscalated([started(state('escalated')), other] as Events)).toBe(true);
  });

  it('an upsert without the state changes nothing; a state that cannot be read is treated as escalated', () => {
    const other = { AsyncJobProviderJobId: keyword('job-1') };
    expect(lastPublishedMayBeEscalated([upsert(state('escalated')), upsert(other)] as Events)).toBe(true);
    expect(
      lastPublishedMayBeEscalated([upsert({ AsyncJobState: { metadata: {}, data: new Uint8Array([1]) } })] as Events),
    ).toBe(true);
    expect(lastPublishedMayBeEscalated([upsert({ AsyncJobState: keyword(7) })] as Events)).toBe(true);
  });
});
