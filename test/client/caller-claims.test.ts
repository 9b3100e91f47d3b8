/**
 * The client's front door never records a calling workflow's identity written by its caller (N1, N4).
 */
import { describe, expect, it } from 'vitest';
import { refuseClaimedCallers } from '../../src/client/caller-claims';
import { AsyncJobInputError } from '../../src/client/errors';
import { workflowActor } from '../../src/core/actor';

describe('claimed caller identities', () => {
  it('N1, N4: a workflow: identity given to the client is refused naming each field, in any spelling', () => {
    const claimed = workflowActor('default', 'Order-7');
    let thrown: unknown;
    try {
      refuseClaimedCallers({ startedBy: ` ${claimed.replace('workflow:', 'WORKFLOW:')}`, authorisedBy: claimed });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AsyncJobInputError);
    expect((thrown as AsyncJobInputError).issues.map((i) => i.path)).toEqual(['startedBy', 'authorisedBy']);
  });

  it('N1, N4: every other identity, and an absent one, passes', () => {
    expect(() =>
      refuseClaimedCallers({ startedBy: 'service:billing', requestedBy: 'workflow', approvedBy: undefined }),
    ).not.toThrow();
  });
});
