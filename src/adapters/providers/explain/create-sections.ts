/** The Create and Job sections: the create request as sent, and how its answer names the provider job. Pure. */
import { type ProviderContract } from '../contract';
import { namesMonitor } from '../interpret/poll-url';
import { type ExplainOptions, type ExplainSection } from './explanation';
import { answerFormatLines } from './format-lines';
import { requestDetailLines } from './request-lines';
import {
  code,
  list,
  numbered,
  placementText,
  pollSourceText,
  pollSourceWhere,
  readingLabel,
  url,
  valueSourceText,
} from './phrases';

/** The operation variables the templates of every call may name, as a caller gives them at start. */
function variableLines(contract: ProviderContract): string[] {
  const declared = Object.entries(contract.variables ?? {});
  if (declared.length === 0) return [];
  const lines = [
    "operation variables, given at start (asyncjob start --var name=value) and named by every call's templates:",
  ];
  for (const [name, rules] of declared) {
    const facts = [
      rules.type,
      rules.required === true
        ? 'required'
        : rules.default !== undefined
          ? `default ${JSON.stringify(rules.default)}`
          : 'optional',
      ...(rules.pattern !== undefined ? [`matching ${code(rules.pattern)}`] : []),
      `at most ${rules.maxLength} characters`,
      rules.reserved ? 'may hold "/" (kept by {+' + name + '})' : 'never holds "/"',
    ];
    lines.push(`  ${name}: ${facts.join(', ')}${rules.description !== undefined ? ` (${rules.description})` : ''}`);
  }
  return lines;
}

/** The create request: method, URL, body, idempotency token, headers, and which answers accept it (I1, C3, V5). */
export function createSection(contract: ProviderContract, options: ExplainOptions): ExplainSection {
  const create = contract.create;
  const body = create.body;
  const lines = [`${create.method} ${url(contract, options, create.path)}`];
  lines.push(
    ...requestDetailLines(
      {
        ...(create.query !== undefined ? { query: create.query } : {}),
        ...(create.headers ? { headers: create.headers } : {}),
      },
      'application/json',
      body.mode === 'none' ? undefined : body.contentType,
    ),
  );
  lines.push(
    body.mode === 'payload'
      ? 'body: the payload is the whole JSON body'
      : body.mode === 'wrapped'
        ? `body: the payload wrapped as ${code(`{"${body.field}": <payload>}`)}`
        : body.mode === 'template'
          ? `body: the JSON template ${code(JSON.stringify(body.json))} ("{payload}" is the payload; a member that is exactly an unset "{name}" is left out)`
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
  lines.push(
    `accepted when the answer is HTTP ${list(create.acceptedStatuses)}; any other 2xx is unexpected, a 4xx/5xx is an HTTP error, never a job state`,
  );
  lines.push(...answerFormatLines(create.format, 'the create answer'));
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
    lines.push(
      'an answer that names the job but states no state is pending: its state is unknown until the first status read (C2)',
    );
    const monitors = (create.statusUrl ?? []).filter((source) => namesMonitor(contract, source));
    if (monitors.length > 0)
      lines.push(
        `a poll URL from ${monitors.map(pollSourceWhere).join(' or ')} names a status monitor: the job is running until the monitor says it is done, whatever the create answer's HTTP status; only a final state word in the create answer ends it there (V5)`,
      );
  }
  lines.push(...variableLines(contract));
  return { id: 'create', title: 'Create', lines };
}

/** How the create answer names the provider job: job ID and poll URL sources, first found wins (V1, C2). */
export function jobSection(contract: ProviderContract): ExplainSection {
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
