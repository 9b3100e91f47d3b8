/**
 * What an adapter will send and read, step by step, in plain words: computed from the VALIDATED contract
 * (defaults applied, preset merged), never from the raw document, so it says what the worker will actually do.
 * `asyncjob adapter explain` prints it. Pure: no I/O, no clock.
 */
import { pollPolicySchema, type PollPolicy } from '../../core/policy';
import {
  type HeaderValueSource,
  type PollUrlSource,
  type ProviderContract,
  type Reading,
  type ResultSource,
  type ValueSource,
} from './contract';

/** One part of the explanation: a stable `id`, a title and its sentences (a nested sentence starts with two spaces). */
export interface ExplainSection {
  id: 'provider' | 'create' | 'job' | 'status' | 'result' | 'cancel' | 'reconciliation' | 'webhook' | 'policy';
  title: string;
  lines: string[];
}

/** The explanation of one contract. */
export interface ContractExplanation {
  name: string;
  description: string | null;
  /** The preset the document named, if the caller knows it (the validated contract no longer says). */
  preset: string | null;
  sections: ExplainSection[];
}

/** Options of {@link describeContract}. */
export interface ExplainOptions {
  /** The `preset:` the document named. */
  preset?: string;
  /** Shown instead of `baseUrl` in URLs (e.g. `${ACME_URL}` when the variable is not set where this runs). */
  baseUrlLabel?: string;
}

type Contract = ProviderContract;

const code = (text: string): string => `\`${text}\``;
const list = (items: readonly (string | number)[]): string => items.map(String).join(', ');
const fields = (paths: readonly string[]): string => paths.map(code).join(', else ');

function url(contract: Contract, options: ExplainOptions, path: string): string {
  const base = options.baseUrlLabel ?? contract.baseUrl;
  return `${base.replace(/\/+$/, '')}${path}`;
}

function headerValueText(source: HeaderValueSource): string {
  if ('value' in source) return JSON.stringify(source.value);
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

function valueSourceText(source: ValueSource): string {
  const where = source.from === 'body' ? `body field ${code(source.field)}` : `header ${source.name}`;
  const extract = source.extract === 'last_path_segment' ? ', its last path segment' : '';
  const strip = source.stripPrefix !== undefined ? `, without the prefix ${JSON.stringify(source.stripPrefix)}` : '';
  return `${where}${extract}${strip}`;
}

function readingLabel(name: string | undefined): string {
  return name === undefined ? "read with the status section's own rules" : `read with reading "${name}"`;
}

function pollSourceText(source: PollUrlSource): string {
  const where =
    source.from === 'request_url'
      ? 'the URL the create request was sent to'
      : source.from === 'header'
        ? `header ${source.name}`
        : `body field ${code(source.field)}`;
  return `${where}: ${readingLabel(source.reading)}`;
}

function resultSourceText(contract: Contract, options: ExplainOptions, source: ResultSource): string {
  switch (source.from) {
    case 'status_field':
      return `GET the URL in field ${code(source.field)} of the answer that reported success`;
    case 'template':
      return `GET ${url(contract, options, source.path)}`;
    case 'create_header':
      return `GET the URL the create answer gave in header ${source.name} (final-state-via location)`;
    case 'request_url':
      return 'GET the URL the create request wrote (final-state-via original-uri)';
    case 'inline':
      return source.field === undefined
        ? `the body of the answer that reported success is the result, stored as is (at most ${contract.result.maxInlineBytes} bytes)`
        : `field ${code(source.field)} of the answer that reported success is the result (at most ${contract.result.maxInlineBytes} bytes)`;
  }
}

function numbered(items: readonly string[]): string[] {
  return items.map((item, index) => `  ${index + 1}. ${item}`);
}

function resultLines(contract: Contract, options: ExplainOptions, sources: readonly ResultSource[]): string[] {
  if (sources.length === 0) return ['  there is no result here: success ends the operation with nothing to collect'];
  return numbered(sources.map((s) => resultSourceText(contract, options, s)));
}

function providerSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const lines = [
    `every request goes to ${options.baseUrlLabel ?? contract.baseUrl} (its origin only: a URL read from an answer that points elsewhere is refused, C4)`,
  ];
  const credential = contract.credential;
  if (credential.scheme === 'none') lines.push('no credential is sent');
  else {
    const secret =
      credential.secretEnv !== undefined
        ? `environment variable ${credential.secretEnv}`
        : `the file ${credential.secretFile}`;
    const how =
      credential.scheme === 'bearer' ? 'Authorization: Bearer <secret>' : `header ${credential.headerName}: <secret>`;
    lines.push(
      `credential: ${how}, the secret read by the worker from ${secret} at each request, sent to this origin only (T4)`,
    );
  }
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
  return { id: 'provider', title: 'Provider', lines };
}

function placementText(placement: NonNullable<Contract['create']['idempotencyToken']>): string {
  return placement.in === 'header' ? `header ${placement.name}` : `body field ${code(placement.field)}`;
}

function createSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const create = contract.create;
  const body = create.body;
  const lines = [`${create.method} ${url(contract, options, create.path)}`];
  lines.push(
    body.mode === 'payload'
      ? 'body: the payload is the whole JSON body'
      : body.mode === 'wrapped'
        ? `body: the payload wrapped as ${code(`{"${body.field}": <payload>}`)}`
        : 'body: none (the payload is not sent)',
  );
  lines.push(
    create.idempotencyToken === undefined
      ? 'idempotency token: not sent (the provider takes none)'
      : `idempotency token: in ${placementText(create.idempotencyToken)}, the same on every repeat of this create (I1)`,
  );
  if (create.clientReference !== undefined)
    lines.push(
      `client reference (the start request's clientReference, else our operation ID): in ${placementText(create.clientReference)}`,
    );
  for (const [name, source] of Object.entries(create.headers ?? {}))
    lines.push(`header ${name}: ${headerValueText(source)}`);
  lines.push(
    `accepted when the answer is HTTP ${list(create.acceptedStatuses)}; any other 2xx is unexpected, a 4xx/5xx is an HTTP error, never a job state`,
  );
  if (create.synchronousSuccess !== undefined) {
    lines.push(
      `synchronous success (C3): HTTP ${list(create.synchronousSuccess.statuses)} means done at once; the result is field ${code(create.synchronousSuccess.resultField)} of that answer`,
    );
  }
  if (create.readState === false)
    lines.push('the create answer is not read for a state: an accepted answer means the job is pending');
  else {
    const name = typeof create.readState === 'string' ? create.readState : undefined;
    lines.push(
      `the create answer is read for the job's state (${readingLabel(name)}): a final state there ends the wait at once (C3), a pending one starts polling`,
    );
  }
  return { id: 'create', title: 'Create', lines };
}

function jobSection(contract: Contract): ExplainSection {
  const create = contract.create;
  const lines: string[] = [];
  if (create.jobId === undefined) lines.push('job ID: none is read; the job is known by its poll URL alone');
  else {
    lines.push('job ID, first found wins:');
    lines.push(...numbered(create.jobId.map(valueSourceText)));
  }
  if (create.statusUrl === undefined) lines.push('poll URL: none is read from the create answer');
  else {
    lines.push('poll URL (V1), first found wins, relative URLs resolved against baseUrl, other origins refused:');
    lines.push(...numbered(create.statusUrl.map(pollSourceText)));
  }
  lines.push(
    'an accepted answer that names neither a usable job ID nor a poll URL proves nothing (C2): the create is ambiguous and reconciled',
  );
  return { id: 'job', title: 'Job ID and poll URL', lines };
}

function readingLines(reading: Reading): string[] {
  const lines: string[] = [];
  if (reading.pendingStatuses !== undefined)
    lines.push(`HTTP ${list(reading.pendingStatuses)}: pending, whatever the body says`);
  if (reading.stateField !== undefined)
    lines.push(`the state is the word in ${fields(reading.stateField)} (the first present)`);
  if (reading.derive !== undefined) {
    const d = reading.derive;
    const cancelled =
      d.cancelledWhen === undefined
        ? ''
        : ` (cancelled when ${code(d.cancelledWhen.field)} is ${list(d.cancelledWhen.values)})`;
    lines.push(
      `AIP-151: while ${code(d.doneField)} is not true the job is pending${reading.stateField !== undefined ? ' (unless the state word says otherwise: a contradiction is unknown)' : ''}; ` +
        `when it is true, ${code(d.errorField)} means failure${cancelled} and ${code(d.responseField)} means success`,
    );
  }
  const table = reading.stateTable;
  if (table !== undefined) {
    const parts = (['pending', 'success', 'failure', 'cancelled', 'expired'] as const)
      .filter((c) => table[c].length > 0)
      .map((c) => `${c}: ${list(table[c])}`);
    lines.push(`state table${table.caseInsensitive ? ' (case-insensitive)' : ' (exact match)'}: ${parts.join('; ')}`);
    lines.push('  any other word is unknown: the operation stops and escalates (P1)');
  }
  const noState = reading.whenNoState;
  if (noState !== undefined) {
    const parts = (['pending', 'success', 'failure'] as const)
      .filter((c) => noState[c] !== undefined)
      .map((c) => `HTTP ${list(noState[c]!)} means ${c}`);
    lines.push(`an answer that states no state: ${parts.join(', ')}`);
  }
  return lines;
}

function statusSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const status = contract.status;
  const lines: string[] = [];
  if (status.useStatusUrl && status.path !== undefined)
    lines.push(
      `${status.method} the poll URL from the create answer; without one, ${status.method} ${url(contract, options, status.path)}`,
    );
  else if (status.useStatusUrl) lines.push(`${status.method} the poll URL from the create answer`);
  else lines.push(`${status.method} ${url(contract, options, status.path ?? '')}`);
  const follows = (contract.create.statusUrl ?? []).some((s) => s.from !== 'request_url');
  if (status.useStatusUrl && follows) {
    lines.push(
      status.followPollUrl
        ? 'a pending answer naming a new poll URL where the current one came from (same header or field) moves polling there, same origin only'
        : 'a new poll URL in a pending answer is ignored (followPollUrl: false)',
    );
  }
  lines.push(
    "the status section's own rules (the status path, poll URLs without a reading, and the state in cancel and reconciliation answers):",
  );
  lines.push(...readingLines(status).map((l) => `  ${l}`));
  for (const [name, reading] of Object.entries(status.readings ?? {})) {
    lines.push(`reading "${name}":`);
    lines.push(...readingLines(reading).map((l) => `  ${l}`));
  }
  const informative: string[] = [];
  if (status.progress !== undefined)
    informative.push(
      `progress in ${code(status.progress.field)} (${status.progress.scale}; shown to people, never used as completion, P8)`,
    );
  if (status.providerTimestampField !== undefined)
    informative.push(`the provider's timestamp in ${code(status.providerTimestampField)}`);
  if (status.expiresAtField !== undefined) informative.push(`the result's expiry in ${code(status.expiresAtField)}`);
  if (informative.length > 0) lines.push(`also read: ${informative.join('; ')}`);
  const hints = status.hints;
  const hintParts = [
    hints?.pollAfterSecondsField !== undefined ? `seconds to wait in ${code(hints.pollAfterSecondsField)}` : undefined,
    hints?.pollAfterMillisecondsField !== undefined
      ? `milliseconds to wait in ${code(hints.pollAfterMillisecondsField)}`
      : undefined,
    hints?.nextCheckAtField !== undefined ? `the next check time in ${code(hints.nextCheckAtField)}` : undefined,
  ].filter((p): p is string => p !== undefined);
  lines.push(
    `when to poll again: Retry-After is honoured as a minimum${hintParts.length > 0 ? `; poll hints: ${hintParts.join(', ')}` : ''} (validated by the planner, P3)`,
  );
  return { id: 'status', title: 'Status', lines };
}

function resultSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const result = contract.result;
  const lines = ['where the result lives when a reading reports success, first found wins (V2):'];
  lines.push(...resultLines(contract, options, result.url));
  const overrides = [
    [readingLabel(undefined), contract.status.result] as const,
    ...Object.entries(contract.status.readings ?? {}).map(([n, r]) => [readingLabel(n), r.result] as const),
  ];
  for (const [who, sources] of overrides) {
    if (sources === undefined) continue;
    if (JSON.stringify(sources) === JSON.stringify(result.url)) {
      lines.push(`on a success ${who}: the same`);
      continue;
    }
    lines.push(`on a success ${who}, instead:`);
    lines.push(...resultLines(contract, options, sources));
  }
  lines.push(
    result.required
      ? 'a success without a result is not ready: never succeeded without one (P7)'
      : 'a result is not required: a success without one ends succeeded with nothing to collect',
  );
  const checks: string[] = [];
  if (result.sha256 !== undefined) {
    const where =
      result.sha256.from === 'status_field'
        ? `field ${code(result.sha256.field)} of the success answer`
        : `header ${result.sha256.name} of the result answer`;
    checks.push(`SHA-256 (${result.sha256.encoding}) from ${where}`);
  }
  for (const [label, source] of [
    ['size in bytes', result.sizeBytes],
    ['record count', result.recordCount],
  ] as const) {
    if (source === undefined) continue;
    checks.push(
      `${label} from ${source.from === 'status_field' ? `field ${code(source.field)} of the success answer` : `header ${source.name} of the result answer`}`,
    );
  }
  if (result.contentType !== undefined) checks.push(`content type one of ${list(result.contentType.expected)}`);
  lines.push(
    checks.length > 0
      ? `integrity checks (R2): ${checks.join('; ')}; a mismatch fails validation and the result is not accepted`
      : 'integrity checks: none declared (the stored result gets its own SHA-256 and size)',
  );
  if (result.csv !== undefined)
    lines.push(`records: CSV lines${result.csv.header ? ', the first line a header' : ', no header line'}`);
  if (result.batch !== undefined) {
    const b = result.batch;
    lines.push(
      `batch (R3): items in ${code(b.itemsField)}, ID ${code(b.idField)}, failed when ${code(b.statusField)} is ${list(b.failedValues)}`,
    );
  }
  if (result.paging !== undefined) {
    const p = result.paging;
    lines.push(
      `paged: items in ${code(p.itemsField)}, next page URL in ${code(p.nextLinkField)} (same origin), at most ${p.maxPages} pages, stored as one JSON array`,
    );
  }
  lines.push(
    contract.collectSafeToRepeat
      ? 'fetching the result again is harmless at this provider (R5): a failed download is retried'
      : 'fetching the result is never repeated (R5): a failed download escalates to a human',
  );
  return { id: 'result', title: 'Result', lines };
}

function cancelSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const cancel = contract.cancel;
  if (cancel === undefined)
    return {
      id: 'cancel',
      title: 'Cancel',
      lines: ['the provider offers no cancel: a cancel request is refused (ASYNCJOB_ERR_CANCEL_UNSUPPORTED)'],
    };
  return {
    id: 'cancel',
    title: 'Cancel',
    lines: [
      `${cancel.method} ${url(contract, options, cancel.path)}, sent once (X1, X3)${cancel.idempotent ? '; repeating it is harmless at this provider' : '; repeating it is not harmless'}`,
      `accepted when the answer is HTTP ${list(cancel.acceptedStatuses)}; only a later status read saying cancelled ends the operation cancelled (the job may finish first, X2)`,
    ],
  };
}

function reconciliationSection(contract: Contract, options: ExplainOptions): ExplainSection {
  const r = contract.reconciliation;
  const create = contract.create;
  const lines = ['after an ambiguous create (the answer lost, a timeout, a 5xx, an answer proving nothing):'];
  switch (r.method) {
    case 'same_token_resend':
      lines.push(
        create.idempotencyToken !== undefined
          ? `the create request is sent again with the same idempotency token (${placementText(create.idempotencyToken)}), and its answer read as a create answer (U2, I3)`
          : `the ${create.method} is sent again as it was: it is idempotent (V4), repeating it has the effect of one`,
      );
      break;
    case 'list_by_client_reference':
    case 'lookup_by_token': {
      const key = r.method === 'list_by_client_reference' ? 'client reference' : 'idempotency token';
      lines.push(
        `GET ${url(contract, options, r.path)} (by the ${key}); jobs listed in ${code(r.listField)}, job ID from ${list(r.jobId.map((s) => code(s.field)))}`,
      );
      if (r.matchField !== undefined) lines.push(`  only items whose ${code(r.matchField)} equals the ${key} match`);
      lines.push(
        '  one match adopts that job; several escalate for a human to choose (U3); none means no job was created',
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

function webhookSection(contract: Contract): ExplainSection {
  const w = contract.webhook;
  if (w === undefined)
    return { id: 'webhook', title: 'Webhook', lines: ['none: the job is followed by polling alone'] };
  const secret =
    w.secret.secretEnv !== undefined ? `environment variable ${w.secret.secretEnv}` : `the file ${w.secret.secretFile}`;
  return {
    id: 'webhook',
    title: 'Webhook',
    lines: [
      `POST /webhooks/${contract.name} at the webhook receiver; signature in header ${w.signatureHeader} (${w.scheme}, secret from ${secret}, at most ${w.toleranceMs / 1000} s old) (W1)`,
      `event ID in ${code(w.eventIdField)} (duplicates dropped), job ID in ${code(w.jobIdField)}, state in ${code(w.stateField)}`,
      'a webhook shortens the wait for the next status read; it never replaces it',
    ],
  };
}

function policySection(contract: Contract): ExplainSection {
  const defaults = pollPolicySchema.parse({});
  // The top-level notFoundWindowMs is the provider's default for the window (adapter.ts, providerPolicyOf).
  const overrides = {
    ...(contract.notFoundWindowMs !== undefined ? { notFoundWindowMs: contract.notFoundWindowMs } : {}),
    ...contract.policy,
  };
  const effective: PollPolicy = pollPolicySchema.parse(overrides);
  const lines: string[] = [];
  const keys = Object.keys(overrides) as (keyof PollPolicy)[];
  lines.push(
    keys.length === 0
      ? 'poll policy: the defaults (a start request may override them)'
      : `poll policy: ${keys.map((k) => `${k} ${String(effective[k])} (default ${String(defaults[k])})`).join(', ')}; a start request may override them`,
  );
  lines.push(
    `backoff from ${effective.baseDelayMs} ms to ${effective.maxDelayMs} ms (${effective.jitter} jitter), at most ${effective.maxStatusRequests} status requests (B1)`,
  );
  lines.push(`a 404 within ${effective.notFoundWindowMs} ms of acceptance means "not visible yet" (H3)`);
  return { id: 'policy', title: 'Timing and budgets', lines };
}

/** The structured explanation of a validated contract. Pure. */
export function describeContract(contract: ProviderContract, options: ExplainOptions = {}): ContractExplanation {
  return {
    name: contract.name,
    description: contract.description ?? null,
    preset: options.preset ?? null,
    sections: [
      providerSection(contract, options),
      createSection(contract, options),
      jobSection(contract),
      statusSection(contract, options),
      resultSection(contract, options),
      cancelSection(contract, options),
      reconciliationSection(contract, options),
      webhookSection(contract),
      policySection(contract),
    ],
  };
}

/** Renders an explanation as text lines: a heading per section, its sentences indented. Pure. */
export function renderExplanation(explanation: ContractExplanation): string[] {
  const head = `${explanation.name}${explanation.preset !== null ? ` (preset ${explanation.preset})` : ''}${explanation.description !== null ? `: ${explanation.description}` : ''}`;
  const out = [head];
  explanation.sections.forEach((section, index) => {
    out.push('', `${index + 1}. ${section.title}`);
    for (const line of section.lines) out.push(`   ${line}`);
  });
  return out;
}

/** What the adapter will send and read, in plain words, one line per entry. Pure. */
export function explainContract(contract: ProviderContract, options: ExplainOptions = {}): string[] {
  return renderExplanation(describeContract(contract, options));
}
