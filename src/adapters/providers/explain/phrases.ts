/** The phrases every section of an explanation builds its sentences from. Pure. */
import { type CallHeaderSource, type PollUrlSource, type ProviderContract, type ValueSource } from '../contract';
import { type ExplainOptions } from './explanation';

/** A field, path or value in backticks. */
export const code = (text: string): string => `\`${text}\``;
/** Items separated by commas. */
export const list = (items: readonly (string | number)[]): string => items.map(String).join(', ');
/** Field paths tried in order: "`a`, else `b`". */
export const fields = (paths: readonly string[]): string => paths.map(code).join(', else ');

/** A path under the provider's base URL (or the label shown in its place). */
export function url(contract: ProviderContract, options: ExplainOptions, path: string): string {
  const base = options.baseUrlLabel ?? contract.baseUrl;
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** Where a header sent to the provider takes its value from. */
export function headerValueText(source: CallHeaderSource): string {
  if ('value' in source) return JSON.stringify(source.value);
  if ('template' in source) return `the template ${JSON.stringify(source.template)}`;
  switch (source.from) {
    case 'now_http_date':
      return 'the current time as an HTTP date';
    case 'first_sent_http_date':
      return 'the time the create was first sent, as an HTTP date (the same on every repeat)';
    case 'token':
      return 'the idempotency token';
    case 'client_reference':
      return "the client reference (the start request's clientReference, else our operation ID)";
    case 'operation_id':
      return 'our operation ID';
    case 'trace_id':
      return "the operation's trace ID";
  }
}

/** Where a value (a job ID) is read from in an answer. */
export function valueSourceText(source: ValueSource): string {
  const where = source.from === 'body' ? `body field ${code(source.field)}` : `header ${source.name}`;
  const extract = source.extract === 'last_path_segment' ? ', its last path segment' : '';
  const strip = source.stripPrefix !== undefined ? `, without the prefix ${JSON.stringify(source.stripPrefix)}` : '';
  return `${where}${extract}${strip}`;
}

/** Which reading interprets an answer: a named one, or the status section's own rules. */
export function readingLabel(name: string | undefined): string {
  return name === undefined ? "read with the status section's own rules" : `read with reading "${name}"`;
}

/** Where a poll URL is read from. */
export function pollSourceWhere(source: PollUrlSource): string {
  return source.from === 'request_url'
    ? 'the URL the create request was sent to'
    : source.from === 'header'
      ? `header ${source.name}`
      : `body field ${code(source.field)}`;
}

/** Where a poll URL is read from, and the reading its answers get. */
export function pollSourceText(source: PollUrlSource): string {
  return `${pollSourceWhere(source)}: ${readingLabel(source.reading)}`;
}

/** Where the idempotency token or the client reference is placed in the create request. */
export function placementText(placement: NonNullable<ProviderContract['create']['idempotencyToken']>): string {
  return placement.in === 'header' ? `header ${placement.name}` : `body field ${code(placement.field)}`;
}

/** Nested, numbered sentences: the order is the priority. */
export function numbered(items: readonly string[]): string[] {
  return items.map((item, index) => `  ${index + 1}. ${item}`);
}
