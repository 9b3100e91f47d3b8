/**
 * Compares what a command printed with the output a document shows after its `$ ` line. The document's lines must
 * appear in order, each matching one printed line; a document line `...` stands for any number of printed lines,
 * and `…` inside a line for any text. Values that differ on every run are compared by their shape: instants, job
 * IDs, run IDs and hex digests. Runs of spaces count as one, so a column's width does not matter.
 */

/** Values whose text changes on every run, replaced by their kind on both sides before comparing. */
const SHAPES: [RegExp, string][] = [
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<instant>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>'],
  [/\bjob_[0-9a-z]+…?/g, '<job>'],
];

function canonical(line: string): string {
  let text = line.replace(/\s+/g, ' ').trim();
  for (const [pattern, kind] of SHAPES) text = text.replace(pattern, kind);
  return text;
}

function lineMatches(documented: string, printed: string): boolean {
  const parts = canonical(documented)
    .split('…')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`).test(canonical(printed));
}

/**
 * The first documented line that the printed output does not show, with what was printed around it, or undefined
 * when the output matches the document.
 */
export function outputMismatch(documented: string[], printed: string): string | undefined {
  const lines = printed.split('\n').filter((l) => l.trim() !== '');
  const match = (d: number, p: number): boolean => {
    if (d === documented.length) return p === lines.length;
    if (documented[d]!.trim() === '...') {
      for (let skip = p; skip <= lines.length; skip++) if (match(d + 1, skip)) return true;
      return false;
    }
    return p < lines.length && lineMatches(documented[d]!, lines[p]!) && match(d + 1, p + 1);
  };
  if (match(0, 0)) return undefined;
  // Name the longest documented prefix that matched, to say where it went wrong.
  let d = 0;
  let p = 0;
  while (
    d < documented.length &&
    p < lines.length &&
    documented[d]!.trim() !== '...' &&
    lineMatches(documented[d]!, lines[p]!)
  ) {
    d++;
    p++;
  }
  return `documented line ${d + 1} ${JSON.stringify(documented[d] ?? '(end)')} against printed line ${p + 1} ${JSON.stringify(lines[p] ?? '(end)')}\nprinted:\n${printed}`;
}
