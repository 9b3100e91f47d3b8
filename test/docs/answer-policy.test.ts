/**
 * docs/answer-policy.md is the answer policy (`src/core/answer-policy.ts`) rendered: the table between its markers
 * must equal what the code says. After an intended change:
 * `ASYNCJOB_WRITE_DOCS=1 npx vitest run test/docs/answer-policy.test.ts`.
 *
 * And the table is the only place outside the adapters' classifier where HTTP statuses are compared: no module in
 * src/ outside src/adapters (and the simulator, which plays a provider) compares a status with a status code.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_POLICY,
  answerSignalSchema,
  SIGNAL_MEANING,
  type ProviderCall,
  type Reaction,
} from '../../src/core/answer-policy';

const ROOT = path.join(__dirname, '..', '..');
const DOC = path.join(ROOT, 'docs', 'answer-policy.md');
const BEGIN = '<!-- answer-policy:begin (rendered from src/core/answer-policy.ts) -->\n';
const END = '<!-- answer-policy:end -->';

/** A reaction as a table cell. */
function cell(reaction: Reaction): string {
  switch (reaction.kind) {
    case 'read':
      return 'read';
    case 'retry':
      return `retry (${reaction.budget === 'rate_limit' ? '429 budget' : 'transport budget'}${reaction.onlyIfRepeatable === true ? ', if repeatable' : ''})`;
    case 'not_found_window':
      return 'wait out the not-found window';
    case 'reconcile':
      return 'reconcile';
    case 'no_job':
      return 'no job';
    case 'escalate':
      return `escalate \`${reaction.reason}\``;
  }
}

/** The rendered table: one row per signal, one column per call. */
function renderTable(): string {
  const calls = Object.keys(ANSWER_POLICY) as ProviderCall[];
  const lines = [
    `| signal | what it is | ${calls.join(' | ')} |`,
    `| --- | --- | ${calls.map(() => '---').join(' | ')} |`,
    ...answerSignalSchema.options.map(
      (signal) =>
        `| \`${signal}\` | ${SIGNAL_MEANING[signal]} | ${calls.map((call) => cell(ANSWER_POLICY[call][signal])).join(' | ')} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** A comparison of something named like a status with a three-digit status code, or a list of codes searched. */
const STATUS_COMPARISON = [
  /\b\w*[sS]tatus\w*\s*(?:===|!==|==|!=|>=|<=|>|<)\s*[1-5]\d\d\b/,
  /\b[1-5]\d\d\s*(?:===|!==|==|!=|>=|<=|>|<)\s*\w*[sS]tatus/,
  /\[\s*[1-5]\d\d\s*(?:,\s*[1-5]\d\d\s*)*\]\.includes\(/,
];

describe('the answer policy in docs (H1-H5)', () => {
  it('docs/answer-policy.md shows the table the code has', () => {
    const doc = readFileSync(DOC, 'utf8');
    const from = doc.indexOf(BEGIN) + BEGIN.length;
    const to = doc.indexOf(END, from);
    expect(from).toBeGreaterThanOrEqual(BEGIN.length);
    expect(to).toBeGreaterThan(-1);
    if (process.env.ASYNCJOB_WRITE_DOCS === '1') writeFileSync(DOC, doc.slice(0, from) + renderTable() + doc.slice(to));
    else
      expect(
        doc.slice(from, to),
        'regenerate: ASYNCJOB_WRITE_DOCS=1 npx vitest run test/docs/answer-policy.test.ts',
      ).toBe(renderTable());
  });

  it('no module outside the adapters compares an HTTP status: what an answer means is decided in the table', () => {
    const outside = sources(path.join(ROOT, 'src')).filter((file) => {
      const relative = path.relative(ROOT, file);
      return !relative.startsWith(path.join('src', 'adapters')) && !relative.startsWith(path.join('src', 'simulator'));
    });
    expect(outside.length).toBeGreaterThan(50);
    const found = outside.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          STATUS_COMPARISON.some((pattern) => pattern.test(line))
            ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });

  it('the seam check finds a comparison when there is one', () => {
    for (const line of ['if (observation.httpStatus === 429)', 'status >= 500', '[401, 403].includes(code)'])
      expect(
        STATUS_COMPARISON.some((pattern) => pattern.test(line)),
        line,
      ).toBe(true);
    expect(STATUS_COMPARISON.some((pattern) => pattern.test('if (signal === "rate_limited")'))).toBe(false);
  });
});
