/**
 * `npx tsx bench/compare.ts OTHER.json RESULTS.json`: how far two full runs of `npm run bench` agree. Every ratio
 * the bench reports (asyncjob / bare and asyncjob / naive per policy and concurrency, and each target whose unit is
 * a ratio) and every other target figure is listed with run B over run A; `within20Percent` is computed, never
 * written by hand. The comparison is written into RESULTS.json (`repeatability`) and printed as markdown.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { round } from './lib/stats';
import type { BenchResults } from './lib/report';
import { sameMeasuredCode } from './lib/code-version';

/** One figure in both runs; for a target, whether each run met it (by that run's own baselines). */
interface Compared {
  name: string;
  unit: string;
  runA: number;
  runB: number;
  bOverA: number;
  within20Percent: boolean;
  met?: { runA: boolean; runB: boolean };
}

interface Figure {
  name: string;
  value: number;
  unit: string;
  met?: boolean;
}

/**
 * A target's key: its name with the numbers a run measured masked, and the server's saturation: a name says what
 * was measured (19,994 operations waiting in one run, 20,000 in the other; a baseline's figure), which must not keep
 * two runs' figures apart. The numbers that say which figure it is stay: the policy ("the 60s policy", "a 1 s
 * policy") and the operation's reads ("3-read"), or the targets of figure 2 would all share one key.
 */
export const keyOf = (name: string): string =>
  name
    .replace(/(\d+ ?s policy|\d+-read)|\d[\d,.]*/g, (number: string, kept: string | undefined) => kept ?? '#')
    .replace(/not saturated|SATURATED/g, '#');

/**
 * The figures of one run, by key: throughput ratios at every point (by name), then every target's measured figure
 * (by its name with the numbers masked; the targets' names differ in their wording otherwise).
 */
function figuresOf(results: BenchResults): Map<string, Figure> {
  const figures = new Map<string, Figure>();
  for (const policy of results.throughput?.policies ?? [])
    for (const point of policy.points) {
      const at = `policy ${policy.name}, concurrency ${point.concurrency}`;
      for (const [name, value] of [
        [`asyncjob / bare, ${at}`, point.asyncjobOverBare.ofMedians],
        [`asyncjob / naive, ${at}`, point.asyncjobOverNaive],
      ] as const)
        figures.set(name, { name, value, unit: 'ratio' });
    }
  for (const target of results.targets ?? [])
    figures.set(keyOf(target.name), { name: target.name, value: target.measured, unit: target.unit, met: target.met });
  return figures;
}

/** Both runs' figures side by side (only those both measured). */
export function compareRuns(runA: BenchResults, runB: BenchResults): Compared[] {
  const a = figuresOf(runA);
  const out: Compared[] = [];
  for (const [key, b] of figuresOf(runB)) {
    const first = a.get(key);
    if (!first) continue;
    const bOverA = first.value === 0 ? (b.value === 0 ? 1 : Number.POSITIVE_INFINITY) : b.value / first.value;
    out.push({
      name: b.name,
      unit: b.unit,
      runA: first.value,
      runB: b.value,
      bOverA: round(bOverA, 3),
      within20Percent: bOverA >= 0.8 && bOverA <= 1.2,
      ...(first.met !== undefined && b.met !== undefined ? { met: { runA: first.met, runB: b.met } } : {}),
    });
  }
  return out;
}

type Run = BenchResults & Record<string, unknown>;

const describeRun = (run: Run) => ({
  startedAt: run.startedAt,
  code: run.code ?? 'not recorded',
  durationSeconds: run.durationSeconds,
  mode: run.mode,
  phases: (run.load ?? []).map((l) => l.phase),
});

function main(): void {
  const [otherPath, resultsPath] = process.argv.slice(2);
  if (!otherPath || !resultsPath) throw new Error('usage: npx tsx bench/compare.ts OTHER.json RESULTS.json');
  const other = JSON.parse(readFileSync(otherPath, 'utf8')) as Run;
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as Run;
  // Run A is the earlier of the two, whichever file is written.
  const [runA, runB] = (other.startedAt ?? '') <= (results.startedAt ?? '') ? [other, results] : [results, other];
  const figures = compareRuns(runA, runB);
  const ratios = figures.filter((f) => f.unit === 'ratio');
  // Two runs agree only as a pair when they measured the same code, neither with local changes.
  const sameCode = sameMeasuredCode(runA.code, runB.code);
  results.repeatability = {
    runA: describeRun(runA),
    runB: describeRun(runB),
    sameCode,
    ratiosWithin20Percent: ratios.every((f) => f.within20Percent),
    // A target counts as met for the pair only when each run met it against its own baselines.
    targetsMetInBoth: figures.filter((f) => f.met?.runA && f.met.runB).map((f) => f.name),
    targetsMissedInEither: figures.filter((f) => f.met && !(f.met.runA && f.met.runB)).map((f) => f.name),
    figures,
  };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  const targetsA = new Map((runA.targets ?? []).map((t) => [keyOf(t.name), t]));
  const targetsB = new Map((runB.targets ?? []).map((t) => [keyOf(t.name), t]));
  const verdict = (target: { met: boolean } | undefined): string =>
    target === undefined ? 'not measured' : target.met ? 'met' : '**missed**';
  const lines = [
    `Run A ${runA.startedAt ?? '?'} (${runA.durationSeconds ?? '?'} s), run B ${runB.startedAt ?? '?'} (${runB.durationSeconds ?? '?'} s); every ratio within 20%: ${ratios.every((f) => f.within20Percent) ? 'yes' : 'no'}; same code: ${sameCode ? 'yes' : 'no (not a repeatability pair)'}`,
    '',
    '| figure | unit | run A | run B | B / A | within 20% |',
    '|---|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.name} | ${f.unit} | ${f.runA} | ${f.runB} | ${f.bOverA} | ${f.within20Percent ? 'yes' : '**no**'} |`,
    ),
    '',
    '| target | run A | run B | unit | run A | run B | conditions |',
    '|---|---|---|---|---|---|---|',
    ...(results.targets ?? []).map((t) => {
      const [a, b] = [targetsA.get(keyOf(t.name)), targetsB.get(keyOf(t.name))];
      return `| ${t.name} ${t.target} | ${a?.measured ?? 'not measured'} | ${b?.measured ?? 'not measured'} | ${t.unit} | ${verdict(a)} | ${verdict(b)} | ${t.conditions ?? ''} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (require.main === module) main();
