/**
 * docs/rules.md defines the numbered rules that code comments and test titles cite ("P3: honours Retry-After").
 * These tests keep the two sides in step: every ID cited in a src comment, a test title or the document itself
 * is defined there; every rule it defines is cited by a test title (unless it is marked not built yet); its
 * "implemented by" names files and functions that exist; its "proved by" names test titles that exist and cite
 * it; and its table of arrows is the transition table of src/core/transitions.ts.
 *
 * Citations are looked for in comments and test titles only, never in code (a variable `T0` is not a rule).
 * Test titles are the first argument of `it`, `test` and `describe` (with `.each` rows rendered into them);
 * a `describe` title's IDs count for the tests inside it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { NON_FINAL_STATES, TRANSITIONS, type TransitionRule } from '../../src/core/transitions';

const ROOT = join(__dirname, '../..');
const RULES_PATH = 'docs/rules.md';

/** A rule ID as a whole word: a family letter, then one or two digits without a leading zero. */
const RULE_ID = /\b[MCIUPBSHEADXRTVGNWF][1-9]\d?\b/g;

/**
 * Words that look like rule IDs and are not rules. Keep this short, and say what each one is.
 */
const NOT_RULES: ReadonlyMap<string, string> = new Map([
  ['V8', 'the JavaScript engine (src/worker.ts talks about its heap)'],
]);

/** What a rule says in place of its implementation and its proof when it is designed but not built. */
const NOT_BUILT = /^not built yet \(issue: [^()]+\)$/;

const TEST_FUNCTIONS = new Set(['it', 'test', 'describe']);

function rel(path: string): string {
  return relative(ROOT, path).split(sep).join('/');
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return tsFiles(path);
      return name.endsWith('.ts') ? [path] : [];
    });
}

function idsIn(text: string): string[] {
  return [...new Set(text.match(RULE_ID) ?? [])].filter((id) => !NOT_RULES.has(id));
}

function parse(path: string): { text: string; source: ts.SourceFile } {
  const text = readFileSync(path, 'utf8');
  return { text, source: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true) };
}

function lineOf(source: ts.SourceFile, pos: number): number {
  return source.getLineAndCharacterOfPosition(pos).line + 1;
}

// ---------------------------------------------------------------------------------------------------------
// Citations in source comments

interface Citation {
  id: string;
  /** `src/core/step.ts:248` or `test/core/step.test.ts:150`. */
  place: string;
  /** The comment or title that cites it, shortened. */
  context: string;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}

/** Every comment of a file (line and block comments, JSDoc included), once each, with its line. */
function commentsOf(path: string): { line: number; text: string }[] {
  const { text, source } = parse(path);
  const found = new Map<number, string>();
  const add = (ranges: ts.CommentRange[] | undefined) =>
    ranges?.forEach((r) => found.set(r.pos, text.slice(r.pos, r.end)));
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.forEachChild(visit);
  };
  visit(source);
  add(ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()));
  return [...found].sort(([a], [b]) => a - b).map(([pos, comment]) => ({ line: lineOf(source, pos), text: comment }));
}

/** The citations in the comments of src/, each at the line where it is written. */
function sourceCitations(): Citation[] {
  return tsFiles(join(ROOT, 'src')).flatMap((path) =>
    commentsOf(path).flatMap((c) =>
      c.text
        .split('\n')
        .flatMap((text, i) =>
          idsIn(text).map((id) => ({ id, place: `${rel(path)}:${c.line + i}`, context: shorten(text) })),
        ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------------
// Test titles

interface TestTitle {
  file: string;
  line: number;
  /** The title as written, or one `.each` row rendered into it. */
  text: string;
  /** The IDs the title itself cites (in its literal text, never in code interpolated into it). */
  cites: string[];
  /** The IDs of the enclosing `describe` titles. */
  inherited: string[];
}

/** The name a test call starts from: `it` for `it(...)`, `it.each(...)(...)`, `it.skipIf(...)(...)`. */
function rootName(e: ts.Expression): string | undefined {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return rootName(e.expression);
  if (ts.isCallExpression(e)) return rootName(e.expression);
  if (ts.isTaggedTemplateExpression(e)) return rootName(e.tag);
  return undefined;
}

/** A title argument: its text (interpolations shown as `${…}`) and its literal text alone; undefined for code. */
function titleText(e: ts.Expression): { text: string; literal: string } | undefined {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return { text: e.text, literal: e.text };
  if (ts.isTemplateExpression(e)) {
    return {
      text: e.head.text + e.templateSpans.map((s) => '${…}' + s.literal.text).join(''),
      literal: [e.head.text, ...e.templateSpans.map((s) => s.literal.text)].join(' '),
    };
  }
  return undefined;
}

function withoutWrappers(e: ts.Expression | undefined): ts.Expression | undefined {
  let x = e;
  while (x !== undefined && (ts.isAsExpression(x) || ts.isParenthesizedExpression(x) || ts.isSatisfiesExpression(x)))
    x = x.expression;
  return x;
}

/** A `.each` table written inline, rendered into the title's `%s`-style placeholders row by row. */
function eachRows(call: ts.CallExpression, title: string): string[] {
  const inner = call.expression;
  if (
    !ts.isCallExpression(inner) ||
    !ts.isPropertyAccessExpression(inner.expression) ||
    inner.expression.name.text !== 'each'
  )
    return [];
  if (!/%[sdifjo]/.test(title)) return [];
  const table = withoutWrappers(inner.arguments[0]);
  if (table === undefined || !ts.isArrayLiteralExpression(table)) return [];
  return table.elements.map((row) => {
    const plain = withoutWrappers(row);
    const cells = plain !== undefined && ts.isArrayLiteralExpression(plain) ? [...plain.elements] : [row];
    let i = 0;
    return title.replace(/%[sdifjo]/g, () => {
      const cell = withoutWrappers(cells[i++]);
      if (cell === undefined) return '';
      if (ts.isStringLiteral(cell) || ts.isNoSubstitutionTemplateLiteral(cell)) return cell.text;
      if (ts.isNumericLiteral(cell)) return cell.text;
      return '…';
    });
  });
}

function titlesOf(path: string): TestTitle[] {
  const { source } = parse(path);
  const file = rel(path);
  const out: TestTitle[] = [];
  const visit = (node: ts.Node, inherited: string[]) => {
    let inside = inherited;
    if (
      ts.isCallExpression(node) &&
      TEST_FUNCTIONS.has(rootName(node.expression) ?? '') &&
      node.arguments[0] !== undefined
    ) {
      const title = titleText(node.arguments[0]);
      if (title !== undefined) {
        const line = lineOf(source, node.arguments[0].getStart());
        const cites = idsIn(title.literal);
        out.push({ file, line, text: title.text, cites, inherited });
        for (const row of eachRows(node, title.text)) out.push({ file, line, text: row, cites: idsIn(row), inherited });
        inside = [...new Set([...inherited, ...cites])];
      }
    }
    node.forEachChild((child) => visit(child, inside));
  };
  visit(source, []);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// docs/rules.md

interface RuleEntry {
  id: string;
  line: number;
  statement: string;
  why: string | undefined;
  implementedBy: string | undefined;
  implementedByLine: number;
  /** `not built yet (...)`, or undefined when proofs are listed. */
  provedByMarker: string | undefined;
  provedBy: { file: string; title: string; line: number }[];
  provedByLine: number;
  problems: string[];
}

function parseRules(markdown: string): RuleEntry[] {
  const lines = markdown.split('\n');
  const rules: RuleEntry[] = [];
  let current: RuleEntry | undefined;
  let inProofs = false;
  let inImplementation = false;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trimEnd();
    const n = index + 1;
    if (/^#{1,3} /.test(line)) {
      inProofs = false;
      inImplementation = false;
      const heading = /^### ([A-Z]\d{1,2})$/.exec(line);
      current = undefined;
      if (heading !== null) {
        current = {
          id: heading[1]!,
          line: n,
          statement: '',
          why: undefined,
          implementedBy: undefined,
          implementedByLine: n,
          provedByMarker: undefined,
          provedBy: [],
          provedByLine: n,
          problems: [],
        };
        rules.push(current);
      }
      continue;
    }
    if (current === undefined) continue;
    const field = /^\*\*(Why|Implemented by|Proved by):\*\*\s*(.*)$/.exec(line);
    if (field !== null) {
      inProofs = false;
      inImplementation = false;
      const [, name, value] = field;
      if (name === 'Why') current.why = value;
      else if (name === 'Implemented by') {
        current.implementedBy = value;
        current.implementedByLine = n;
        inImplementation = true;
      } else {
        current.provedByLine = n;
        if (value !== '') current.provedByMarker = value;
        else inProofs = true;
      }
      continue;
    }
    if (inImplementation) {
      // An "implemented by" may wrap onto the following lines, up to a blank line.
      if (line === '') inImplementation = false;
      else current.implementedBy = `${current.implementedBy ?? ''} ${line.trim()}`;
      continue;
    }
    if (inProofs) {
      if (line === '') {
        if (current.provedBy.length > 0) inProofs = false;
        continue;
      }
      const proof = /^- `([^`]+)` "(.+)"$/.exec(line);
      if (proof === null)
        current.problems.push(
          `${current.id}: docs/rules.md:${n}: a proof is written as - \`test/file.test.ts\` "the test title", not: ${line}`,
        );
      else current.provedBy.push({ file: proof[1]!, title: proof[2]!, line: n });
      continue;
    }
    if (current.why === undefined && current.implementedBy === undefined) current.statement += `${line}\n`;
  }
  return rules;
}

/** `src/a.ts` `f`, `g`; `src/b.ts` `h` -> [{ file: 'src/a.ts', names: ['f', 'g'] }, { file: 'src/b.ts', names: ['h'] }]. */
function implementationsOf(value: string): { file: string; names: string[] }[] {
  const groups: { file: string; names: string[] }[] = [];
  for (const [, token] of value.matchAll(/`([^`]+)`/g)) {
    if (token!.includes('/')) groups.push({ file: token!, names: [] });
    else groups.at(-1)?.names.push(token!);
  }
  return groups;
}

/** Whether `name` is declared in a file's text: a function, class, const, type, interface or enum. */
function declares(text: string, name: string): boolean {
  const escaped = name.replace(/[$]/g, '\\$');
  return new RegExp(`\\b(?:function\\*?|class|const|let|var|type|interface|enum)\\s+${escaped}\\b`).test(text);
}

/** The row of the arrow table for one transition rule, exactly as docs/rules.md writes it. */
function arrowRow(rule: TransitionRule): string {
  const everyNonFinal = NON_FINAL_STATES.filter((s) => s !== 'escalated');
  const from =
    rule.from.length === everyNonFinal.length && everyNonFinal.every((s) => rule.from.includes(s))
      ? 'any non-final state but `escalated`'
      : rule.from.map((s) => `\`${s}\``).join(', ');
  const evidence = rule.evidence.map((e) => `\`${e}\``).join(', ');
  const rules = rule.rule
    .split(',')
    .map((r) => r.trim())
    .map((r) => `[${r}](#${r.toLowerCase()})`)
    .join(', ');
  return `| ${from} | \`${rule.event}\` | \`${rule.to}\` | ${evidence} | ${rule.fact} | ${rules} |`;
}

// ---------------------------------------------------------------------------------------------------------

const markdown = readFileSync(join(ROOT, RULES_PATH), 'utf8');
const rules = parseRules(markdown);
const defined = new Map(rules.map((r) => [r.id, r]));
const isNotBuilt = (r: RuleEntry) => r.implementedBy !== undefined && NOT_BUILT.test(r.implementedBy);

const titles = tsFiles(join(ROOT, 'test')).flatMap(titlesOf);
const titleCitations: Citation[] = titles.flatMap((t) =>
  t.cites.map((id) => ({ id, place: `${t.file}:${t.line}`, context: `"${shorten(t.text)}"` })),
);
const commentCitations = sourceCitations();

describe('docs/rules.md, the rule book', () => {
  it('defines each rule once, with a statement, why, what implements it and what proves it', () => {
    const problems: string[] = [];
    const seen = new Map<string, number>();
    for (const r of rules) {
      const at = `docs/rules.md:${r.line}`;
      if (seen.has(r.id)) problems.push(`${r.id}: defined twice (docs/rules.md:${seen.get(r.id)} and ${at})`);
      seen.set(r.id, r.line);
      if (r.statement.trim() === '') problems.push(`${r.id}: ${at} has no statement under its heading`);
      if (r.why === undefined || r.why.trim() === '') problems.push(`${r.id}: ${at} has no **Why:** line`);
      if (r.implementedBy === undefined || r.implementedBy.trim() === '')
        problems.push(`${r.id}: ${at} has no **Implemented by:** line`);
      const notBuiltImpl = isNotBuilt(r);
      const notBuiltProof = r.provedByMarker !== undefined && NOT_BUILT.test(r.provedByMarker);
      if (r.provedByMarker !== undefined && !notBuiltProof)
        problems.push(
          `${r.id}: docs/rules.md:${r.provedByLine}: "Proved by" lists test titles, or says exactly "not built yet (issue: <name>)", not: ${r.provedByMarker}`,
        );
      if (r.provedByMarker === undefined && r.provedBy.length === 0)
        problems.push(`${r.id}: docs/rules.md:${r.provedByLine}: no proof listed (and not marked not built yet)`);
      if (notBuiltImpl !== notBuiltProof)
        problems.push(`${r.id}: ${at}: "not built yet" must mark both its implementation and its proof, or neither`);
      problems.push(...r.problems);
    }
    expect(rules.length, 'docs/rules.md defines no rule (### P3 headings)').toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('finds the citations it checks in src comments and in test titles', () => {
    // A guard for this test itself: an extraction that silently finds nothing would prove nothing.
    expect(commentCitations.length).toBeGreaterThan(100);
    expect(titleCitations.length).toBeGreaterThan(100);
  });

  it('every ID cited in a src comment, a test title or the rule book itself is defined there', () => {
    const docCitations: Citation[] = markdown
      .split('\n')
      .flatMap((line, i) => idsIn(line).map((id) => ({ id, place: `${RULES_PATH}:${i + 1}`, context: shorten(line) })));
    const problems = [...commentCitations, ...titleCitations, ...docCitations]
      .filter((c) => !defined.has(c.id))
      .map((c) => `${c.id}: cited at ${c.place} (${c.context}) but not defined in docs/rules.md`);
    expect(problems).toEqual([]);
  });

  it('every arrow of the transition table cites rules the book defines', () => {
    const problems = TRANSITIONS.flatMap((t) =>
      t.rule
        .split(',')
        .map((r) => r.trim())
        .filter((id) => !defined.has(id))
        .map(
          (id) =>
            `${id}: cited by the arrow ${t.from.join('|')} -(${t.event})-> ${t.to} in src/core/transitions.ts TRANSITIONS, but not defined in docs/rules.md`,
        ),
    );
    expect(problems).toEqual([]);
  });

  it('every rule it defines is cited by a test title, unless it is marked not built yet', () => {
    const cited = new Map<string, TestTitle>();
    for (const t of titles) for (const id of t.cites) if (!cited.has(id)) cited.set(id, t);
    const problems: string[] = [];
    for (const r of rules) {
      const citing = cited.get(r.id);
      if (isNotBuilt(r)) {
        if (citing !== undefined)
          problems.push(
            `${r.id}: marked not built yet in docs/rules.md:${r.implementedByLine}, but the test "${shorten(citing.text)}" (${citing.file}:${citing.line}) cites it: list its implementation and proof`,
          );
      } else if (citing === undefined) {
        problems.push(
          `${r.id}: defined at docs/rules.md:${r.line} but no test title cites it: name it in the title of a test that proves it (e.g. "${r.id}: ...", or a describe "(${r.id})")`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  it('every "implemented by" names files that exist and functions those files declare', () => {
    const problems: string[] = [];
    for (const r of rules) {
      if (r.implementedBy === undefined || isNotBuilt(r)) continue;
      const at = `docs/rules.md:${r.implementedByLine}`;
      const groups = implementationsOf(r.implementedBy);
      if (groups.length === 0)
        problems.push(`${r.id}: ${at} names no file (write \`src/dir/file.ts\` \`functionName\`)`);
      for (const { file, names } of groups) {
        const path = join(ROOT, file);
        if (!existsSync(path) || !statSync(path).isFile()) {
          problems.push(`${r.id}: ${at} names ${file}, which does not exist`);
          continue;
        }
        if (names.length === 0)
          problems.push(`${r.id}: ${at} names ${file} without the function(s) that implement the rule`);
        const text = readFileSync(path, 'utf8');
        for (const name of names)
          if (!declares(text, name))
            problems.push(`${r.id}: ${at} names ${name} in ${file}, which does not declare it`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every "proved by" names a test title that exists in that file and cites the rule', () => {
    const byFile = new Map<string, TestTitle[]>();
    for (const t of titles) byFile.set(t.file, [...(byFile.get(t.file) ?? []), t]);
    const problems: string[] = [];
    for (const r of rules) {
      for (const proof of r.provedBy) {
        const at = `docs/rules.md:${proof.line}`;
        const inFile = byFile.get(proof.file);
        if (inFile === undefined) {
          problems.push(`${r.id}: ${at} names ${proof.file}, which does not exist or has no test titles`);
          continue;
        }
        const matches = inFile.filter((t) => t.text === proof.title);
        if (matches.length === 0) problems.push(`${r.id}: ${at}: no test titled "${proof.title}" in ${proof.file}`);
        else if (!matches.some((t) => t.cites.includes(r.id) || t.inherited.includes(r.id))) {
          problems.push(
            `${r.id}: ${at}: the test "${proof.title}" (${proof.file}:${matches[0]!.line}) proves it but does not cite ${r.id} in its title or its describe's`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the arrow table is the transition table of src/core/transitions.ts', () => {
    const documented = markdown
      .split('\n')
      .filter((line) => /^\| .* \| `[a-z_]+` \| `[a-z_]+` \| .* \| (local|remote) \| .* \|$/.test(line.trimEnd()));
    const expected = TRANSITIONS.map(arrowRow);
    const missing = expected
      .filter((row) => !documented.includes(row))
      .map((row) => `missing from docs/rules.md (Every arrow): ${row}`);
    const extra = documented
      .filter((row) => !expected.includes(row.trimEnd()))
      .map((row) => `in docs/rules.md but not in TRANSITIONS: ${row}`);
    expect([...missing, ...extra]).toEqual([]);
  });
});
