/**
 * Who a Nexus request acts as (N4): the calling workflow named by the request's links, never an identity the
 * caller writes for another; and the start request `runJob` checks before anything is created.
 */
import { convertWorkflowEventLinkToNexusLink } from '@temporalio/nexus/lib/link-converter';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import { HandlerError } from 'nexus-rpc';
import { describe, expect, it } from 'vitest';
import { workflowActor } from '../../src/core/actor';
import { nexusEndpointFinding } from '../../src/doctor/nexus-check';
import { callerOfLinks } from '../../src/nexus/caller';
import { runJobRequest } from '../../src/nexus/handler';

const link = convertWorkflowEventLinkToNexusLink({
  namespace: 'orders',
  workflowId: 'Order 7',
  runId: 'run-1',
  eventRef: {
    eventId: Long.fromNumber(5),
    eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED,
  },
});
const caller = workflowActor('orders', 'Order 7');
const NOW = 1_800_000_000_000;
const request = {
  operationId: 'op-1',
  provider: 'reports',
  payload: { report: 'weekly' },
  authorisedBy: 'policy:reports',
  createDeadline: { afterMs: 60_000 },
  resultDeadline: { afterMs: 600_000 },
};

/** The fields a BAD_REQUEST names, from its cause's details. */
function badFields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HandlerError);
    expect((err as HandlerError).type).toBe('BAD_REQUEST');
    const cause = (err as HandlerError).cause as { type: string; details: { path: string }[] };
    expect(cause.type).toBe('ASYNCJOB_ERR_INVALID_INPUT');
    return cause.details.map((issue) => issue.path);
  }
  throw new Error('not refused');
}

describe('the Nexus caller (N4)', () => {
  it('N4: the calling workflow of a workflow event link is the caller, as workflow:<namespace>/<workflow ID>', () => {
    expect(callerOfLinks([link])).toBe('workflow:orders/Order%207');
    expect(callerOfLinks([])).toBeUndefined();
    expect(callerOfLinks([{ type: 'other', url: new URL('https://example.com') }])).toBeUndefined();
  });

  it('N4: runJob records the caller as starter; the same identity given again is accepted', () => {
    expect(runJobRequest(request, caller, NOW).startedBy).toBe(caller);
    expect(runJobRequest({ ...request, startedBy: caller }, caller, NOW).startedBy).toBe(caller);
  });

  it('N4: another starter than the calling workflow is refused with every other bad field; none given without a caller is refused', () => {
    expect(
      badFields(() => runJobRequest({ ...request, startedBy: 'service:forged', provider: '' }, caller, NOW)),
    ).toEqual(expect.arrayContaining(['startedBy', 'provider']));
    expect(badFields(() => runJobRequest(request, undefined, NOW))).toEqual(['startedBy']);
    expect(runJobRequest({ ...request, startedBy: 'service:billing' }, undefined, NOW).startedBy).toBe(
      'service:billing',
    );
  });

  it('N4: a calling workflow is named only by its link: a workflow: starter given without one is refused', () => {
    expect(badFields(() => runJobRequest({ ...request, startedBy: caller }, undefined, NOW))).toEqual(['startedBy']);
  });
});

describe('asyncjob doctor: the Nexus endpoint', () => {
  const expected = { endpoint: 'asyncjob', namespace: 'default', taskQueue: 'asyncjob', address: '127.0.0.1:7233' };

  it('is ok when it targets the worker, and names the command that creates or fixes it otherwise', () => {
    expect(nexusEndpointFinding(expected, { namespace: 'default', taskQueue: 'asyncjob' }).status).toBe('ok');
    expect(nexusEndpointFinding(expected, undefined).fix).toBe(
      'temporal operator nexus endpoint create --name asyncjob --target-namespace default --target-task-queue asyncjob --address 127.0.0.1:7233',
    );
    const elsewhere = nexusEndpointFinding(expected, { namespace: 'default', taskQueue: 'other' });
    expect(elsewhere).toMatchObject({ status: 'problem', kind: 'setup' });
    expect(elsewhere.message).toContain('task queue other');
  });
});
