/**
 * The command lines README.md and docs/*.md tell a user to run, read from the markdown itself: lines of fenced code
 * blocks whose info string is empty, `sh`, `bash`, `shell` or `console`, and inline code spans in prose that are a
 * whole command (they start as a user's command does: `npx asyncjob`, `asyncjob `, `npm `, `node `, `bin/asyncjob`,
 * an environment assignment before a command, `export `, `eval `, `bash `).
 *
 * No markdown parser is a dependency of this project; the subset of CommonMark the docs use is read here: fences of
 * three or more backticks or tildes indented at most three spaces, and code spans delimited by equal backtick runs,
 * which may continue across the line breaks of one paragraph.
 *
 * In a block, a `$ ` prompt marks the commands, and the lines after one up to the next prompt are its output; a
 * block without any prompt holds only commands. A line ending in `\` continues on the next; a trailing `# comment`
 * (outside quotes) is kept apart, as it often states the outcome (`# exit 7`); a line that is only a comment is
 * skipped. A block preceded by `<!-- illustrative: REASON -->` (on the line before its fence) holds no commands to
 * run; the reason is reported instead.
 */

/** Info strings whose blocks hold shell commands. */
const SHELL_LANGUAGES = new Set(['', 'sh', 'bash', 'shell', 'console']);

/** How an inline code span starts when it is a whole command. */
const INLINE_COMMAND =
  /^(npx asyncjob|asyncjob |npm |node |\.\/bin\/asyncjob|bin\/asyncjob|export |eval |bash |[A-Z][A-Z0-9_]*=\S+ )/;

/** One command line of a document. */
export interface DocCommand {
  /** The document, relative to the repository root (`docs/cli.md`). */
  file: string;
  /** 1-based line where the command starts. */
  line: number;
  /** The command with continuations joined, without prompt or trailing comment, whitespace collapsed. */
  text: string;
  /** `block` for a fenced block's line, `inline` for a code span in prose. */
  kind: 'block' | 'inline';
  /** The trailing comment without its `#`, or '' (for a block line). */
  comment: string;
  /** The output lines shown after a `$ ` command, up to the next prompt or the block's end. */
  output: string[];
}

/** A fenced shell block the document marks illustrative, with the reason it gives. */
interface IllustrativeBlock {
  file: string;
  line: number;
  reason: string;
}

/** What one document holds. */
export interface DocExtraction {
  commands: DocCommand[];
  illustrative: IllustrativeBlock[];
}

/** The registry key of a command: its file and its text. */
export function commandKey(file: string, text: string): string {
  return `${file}: ${text}`;
}

/** Collapses runs of whitespace to one space and trims. */
function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Splits a line into its command and its trailing `# comment`; a `#` inside quotes or a word is not a comment. */
function splitComment(line: string): { code: string; comment: string } {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return { code: line.slice(0, i).trimEnd(), comment: line.slice(i + 1).trim() };
    }
  }
  return { code: line.trimEnd(), comment: '' };
}

interface Fence {
  open: number;
  close: number;
  info: string;
  body: string[];
}

/** The fenced code blocks of a document (0-based line of each fence) and the lines outside them. */
function fences(lines: string[]): { blocks: Fence[]; prose: (string | null)[] } {
  const blocks: Fence[] = [];
  const prose: (string | null)[] = [...lines];
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)?(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const marker = open[1]!;
    let close = i + 1;
    const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
    while (close < lines.length && !closing.test(lines[close]!)) close++;
    const indent = /^ */.exec(lines[i]!)![0].length;
    const body = lines.slice(i + 1, close).map((l) => l.slice(Math.min(indent, /^ */.exec(l)![0].length)));
    blocks.push({ open: i, close, info: (open[2] ?? '').toLowerCase(), body });
    for (let j = i; j <= close && j < lines.length; j++) prose[j] = null;
    i = close;
  }
  return { blocks, prose };
}

/** The reason of an `<!-- illustrative: ... -->` comment on the line before a fence, or undefined. */
function illustrativeReason(lines: string[], fenceLine: number): string | undefined {
  const before = lines[fenceLine - 1]?.trim() ?? '';
  return /^<!--\s*illustrative:\s*(.+?)\s*-->$/.exec(before)?.[1];
}

/** The commands of one shell block. */
function blockCommands(file: string, block: Fence): DocCommand[] {
  const prompted = block.body.some((l) => l.startsWith('$ '));
  const commands: DocCommand[] = [];
  let current: DocCommand | undefined;
  let continuing = false;
  block.body.forEach((raw, index) => {
    const line = block.open + 2 + index;
    if (continuing && current) {
      const { code, comment } = splitComment(raw);
      continuing = code.endsWith('\\');
      current.text = normalise(`${current.text} ${code.replace(/\\$/, '')}`);
      current.comment ||= comment;
      return;
    }
    const isCommand = prompted ? raw.startsWith('$ ') : raw.trim() !== '' && !raw.trim().startsWith('#');
    if (!isCommand) {
      if (prompted && current && raw.trim() !== '') current.output.push(raw);
      return;
    }
    const { code, comment } = splitComment(prompted ? raw.slice(2) : raw);
    continuing = code.endsWith('\\');
    current = { file, line, text: normalise(code.replace(/\\$/, '')), kind: 'block', comment, output: [] };
    commands.push(current);
  });
  return commands;
}

/** The code spans of the prose (fenced blocks and HTML comments left out), each with the line it starts on. */
function codeSpans(prose: (string | null)[]): { line: number; text: string }[] {
  const spans: { line: number; text: string }[] = [];
  // Paragraphs: runs of non-blank prose lines; a span may cross the line breaks of one paragraph.
  let start = 0;
  while (start < prose.length) {
    if (prose[start] === null || prose[start]!.trim() === '') {
      start++;
      continue;
    }
    let end = start;
    while (end < prose.length && prose[end] !== null && prose[end]!.trim() !== '') end++;
    const paragraph = prose
      .slice(start, end)
      .join('\n')
      .replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' '));
    const lineAt = (offset: number): number => start + 1 + (paragraph.slice(0, offset).match(/\n/g)?.length ?? 0);
    for (let i = 0; i < paragraph.length; i++) {
      if (paragraph[i] !== '`') continue;
      const run = /^`+/.exec(paragraph.slice(i))![0];
      const close = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
      close.lastIndex = i + run.length;
      const found = close.exec(paragraph);
      if (!found) {
        i += run.length - 1;
        continue;
      }
      spans.push({ line: lineAt(i), text: normalise(paragraph.slice(i + run.length, found.index)) });
      i = found.index + run.length - 1;
    }
    start = end;
  }
  return spans;
}

/** Every command of a document, and its blocks marked illustrative. */
export function extractCommands(file: string, markdown: string): DocExtraction {
  const lines = markdown.split('\n');
  const { blocks, prose } = fences(lines);
  const commands: DocCommand[] = [];
  const illustrative: IllustrativeBlock[] = [];
  for (const block of blocks) {
    if (!SHELL_LANGUAGES.has(block.info)) continue;
    const reason = illustrativeReason(lines, block.open);
    if (reason !== undefined) illustrative.push({ file, line: block.open + 1, reason });
    else commands.push(...blockCommands(file, block));
  }
  for (const span of codeSpans(prose)) {
    if (INLINE_COMMAND.test(span.text)) {
      commands.push({ file, line: span.line, text: span.text, kind: 'inline', comment: '', output: [] });
    }
  }
  return { commands: commands.sort((a, b) => a.line - b.line), illustrative };
}
