/**
 * The Web UI's summary and details of an operation's run: identities, never the payload.
 */
import { describe, expect, it } from 'vitest';
import { runDetails, runSummary } from '../../src/core/run-metadata';

describe('run metadata', () => {
  it('names the provider and operation, then the starter and the authoriser, and nothing of the request', () => {
    const request = {
      operationId: 'report-7',
      provider: 'demo-reports',
      startedBy: 'workflow:default/Order-7',
      authorisedBy: 'policy:orders',
      payload: { secret: 'never-shown' },
    };
    expect(runSummary(request)).toBe('asyncjob demo-reports report-7');
    expect(runDetails(request)).toBe('Started by `workflow:default/Order-7`, authorised by `policy:orders`.');
    expect(runSummary(request) + runDetails(request)).not.toContain('never-shown');
  });
});
