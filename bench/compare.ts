/**
 * `npx tsx bench/compare.ts OTHER.json RESULTS.json`: how far two full runs of `npm run bench` agree. Every ratio
 * the bench reports (asyncjob / bare and asyncjob / naive per policy and concurrency, and each target whose unit is
 * a ratio) and every other target figure is listed with run B over run A; `within20Percent` is computed, never
 * written by hand. The comparison is written into RESULTS.json (`repeatability`) and printed as markdown.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { round } from './lib/stats';
import type { BenchResults } from './lib/report';

/** One figure in both runs. */
interface Compared {
  name: string;
  unit: string;
  runA: number;
  runB: number;
  bOverA: number;
  within20Percent: boolean;
}

/** The figures of one run, by name: throughput ratios at every point, then every target's measured figure. */
function figuresOf(results: BenchResults): Map<string, { value: number; unit: string }> {
  const figures = new Map<string, { value: number; unit: string }>();
  for (const policy of results.throughput?.policies ?? [])
    for (const point of policy.points) {
      const at = `policy ${policy.name}, concurrency ${point.concurrency}`;
      figures.set(`asyncjob / bare, ${at}`, { value: point.asyncjobOverBare.ofMedians, unit: 'ratio' });
      figures.set(`asyncjob / naive, ${at}`, { value: point.asyncjobOverNaive, unit: 'ratio' });
    }
  for (const target of results.targets ?? []) figures.set(target.name, { value: target.measured, unit: target.unit });
  return figures;
}

/** Both runs' figures side by side (only those both measured). */
export function compareRuns(runA: BenchResults, runB: BenchResults): Compared[] {
  const a = figuresOf(runA);
  const out: Compared[] = [];
  for (const [name, b] of figuresOf(runB)) {
    const first = a.get(name);
    if (!first) continue;
    const bOverA = first.value === 0 ? (b.value === 0 ? 1 : Number.POSITIVE_INFINITY) : b.value / first.value;
    out.push({
      name,
      unit: b.unit,
      runA: first.value,
      runB: b.value,
      bOverA: round(bOverA, 3),
      within20Percent: bOverA >= 0.8 && bOverA <= 1.2,
    });
  }
  return out;
}

function main(): void {
  const [otherPath, resultsPath] = process.argv.slice(2);
  if (!otherPath || !resultsPath) throw new Error('usage: npx tsx bench/compare.ts OTHER.json RESULTS.json');
  const other = JSON.parse(readFileSync(otherPath, 'utf8')) as BenchResults & Record<string, unknown>;
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchResults & Record<string, unknown>;
  const figures = compareRuns(other, results);
  const ratios = figures.filter((f) => f.unit === 'ratio');
  results.repeatability = {
    runA: { startedAt: other.startedAt, durationSeconds: other.durationSeconds, mode: other.mode },
    runB: { startedAt: results.startedAt, durationSeconds: results.durationSeconds, mode: results.mode },
    ratiosWithin20Percent: ratios.every((f) => f.within20Percent),
    figures,
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  const lines = [
    `Run A ${other.startedAt ?? '?'} (${other.durationSeconds ?? '?'} s), run B ${results.startedAt ?? '?'} (${results.durationSeconds ?? '?'} s); every ratio within 20%: ${ratios.every((f) => f.within20Percent) ? 'yes' : 'no'}`,
    '',
    '| figure | unit | run A | run B | B / A | within 20% |',
    '|---|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.name} | ${f.unit} | ${f.runA} | ${f.runB} | ${f.bOverA} | ${f.within20Percent ? 'yes' : '**no**'} |`,
    ),
  ];
  const targetsA = new Map((other.targets ?? []).map((t) => [t.name, t]));
  lines.push(
    '',
    '| target | run A | run B (results.json) | unit | met in run B | conditions (run B) |',
    '|---|---|---|---|---|---|',
    ...(results.targets ?? []).map(
      (t) =>
        `| ${t.name} ${t.target} | ${targetsA.get(t.name)?.measured ?? 'not measured'} | ${t.measured} | ${t.unit} | ${t.met ? 'met' : '**missed**'} | ${t.conditions ?? ''} |`,
    ),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
