/** The Reconciliation section: what happens after an ambiguous create. Pure. */
import { type ProviderContract } from '../contract';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { code, list, placementText, url, valueSourceText } from './phrases';
import { requestDetailLines } from './request-lines';

/** How an ambiguous create is resolved: repeated, looked up, or escalated (U2, U3, I3, V4). */
export function reconciliationSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const reconciliation = contract.reconciliation;
  const create = contract.create;
  const lines = ['after an ambiguous create (the answer lost, a timeout, a 5xx, an answer proving nothing):'];
  switch (reconciliation.method) {
    case 'same_token_resend':
      lines.push(
        create.idempotencyToken !== undefined
          ? `the create request is sent again with the same idempotency token (${placementText(create.idempotencyToken)}), and its answer read as a create answer (U2, I3)`
          : `the ${create.method} is sent again as it was: it is idempotent (V4), repeating it has the effect of one`,
      );
      break;
    case 'list_by_client_reference':
    case 'lookup_by_token': {
      const key = reconciliation.method === 'list_by_client_reference' ? 'client reference' : 'idempotency token';
      lines.push(
        `${reconciliation.httpMethod} ${url(contract, options, reconciliation.path)} (by the ${key}); jobs listed in ${code(reconciliation.listField)}, job ID from ${list(reconciliation.jobId.map((s) => code(s.field)))}`,
        ...requestDetailLines(reconciliation, 'application/json'),
      );
      if (reconciliation.matchField !== undefined)
        lines.push(`  only items whose ${code(reconciliation.matchField)} equals the ${key} match`);
      lines.push(
        '  one match adopts that job; several escalate for a human to choose (U3); none means no job was created',
      );
      break;
    }
    case 'lookup': {
      const absent = reconciliation.absent;
      const codes = absent.errorCodes === undefined ? '' : `, or a 4xx with the error code ${list(absent.errorCodes)}`;
      const statuses = absent.statuses.length === 0 ? '' : `HTTP ${list(absent.statuses)}`;
      lines.push(
        `${reconciliation.httpMethod} ${url(contract, options, reconciliation.path)} (one lookup); a 2xx names the job: job ID from ${list(reconciliation.jobId.map(valueSourceText))}`,
        ...requestDetailLines(reconciliation, 'application/json'),
        `  no such job: ${[statuses, 'a 2xx with an empty body'].filter((part) => part !== '').join(', ')}${codes}; then no job was created: the create is sent again within the create deadline (U2, I3)`,
        '  any other answer is retried within the budgets, or escalates, as the answer policy says',
      );
      break;
    }
    case 'none':
      lines.push(
        `nothing is repeated: the provider offers no way to find the job${create.method === 'POST' || create.method === 'PATCH' ? ` and a ${create.method} is not idempotent` : ''}; the operation escalates (create_unknown) and a human decides (V4)`,
      );
      break;
  }
  return { id: 'reconciliation', title: 'Reconciliation', lines };
}
