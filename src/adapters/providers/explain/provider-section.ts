/** The Provider section: where every request goes, the credential, headers and cookies sent with each. Pure. */
import { describeCredential } from '../../auth/describe';
import { type ProviderContract } from '../contract';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { jsonContentTypesLines } from './format-lines';
import { headerValueText } from './phrases';

/** Where every request goes and what it carries: origin, credential, headers, query, cookies, request ID (C4, T4, H5). */
export function providerSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const lines = [
    `every request goes to ${options.baseUrlLabel ?? contract.baseUrl} (its origin only: a URL read from an answer that points elsewhere is refused, C4)`,
  ];
  lines.push(...describeCredential(contract.credential));
  const headers = Object.entries(contract.headers ?? {});
  if (headers.length > 0) {
    lines.push('headers sent on every request (create, status, cancel, result, reconciliation):');
    for (const [name, source] of headers) lines.push(`  ${name}: ${headerValueText(source)}`);
  }
  const query = Object.entries(contract.query ?? {});
  if (query.length > 0)
    lines.push(
      `query parameters added to every URL that lacks them (URLs read from answers too): ${query.map(([k, v]) => `${k}=${v}`).join('&')}`,
    );
  lines.push(
    contract.cookies
      ? "cookies: the provider's cookies are kept per operation (in the store, sent back to this origin only, never in history or logs)"
      : 'cookies: none are kept; each request is sent without cookies',
  );
  lines.push(`the provider's request ID is read from header ${contract.requestIdHeader} of every answer (H5)`);
  lines.push(...jsonContentTypesLines(contract));
  return { id: 'provider', title: 'Provider', lines };
}
