/**
 * docs/cli.md says which commands take `--json`, `--verbose` and `--help`: run through the installed entry as a
 * user types them, the commands it names take all three together (their usage, exit 0), and those it names with
 * fewer refuse the others (exit 2, a usage error) rather than ignoring them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../../src/cli/usage';
import { SHARED_FLAGS } from '../../src/doctor/settings/shared-flags';
import { ROOT, runShell } from './shell';

/** The commands docs/cli.md says take all three flags. */
const EVERY_FLAG = [
  'start',
  'status',
  'watch',
  'result',
  'cancel',
  'decide',
  'list',
  'adapter validate',
  'bundle',
  'replay-check',
  'keys new',
  'codec-server',
  'worker',
  'dev',
];
/** Flags docs/cli.md says these commands do not take; each must be refused. */
const REFUSED: [string, string][] = [
  ['doctor', '--verbose'],
  ['audit verify', '--verbose'],
  ['audit show op-1', '--verbose'],
  ['audit checkpoint', '--json'],
  ['audit checkpoint', '--verbose'],
  ['mcp', '--json'],
  ['mcp', '--verbose'],
  ['simulate', '--json'],
  ['simulate', '--verbose'],
];
/** Commands that take `--help` (and their own flags), some `--json` besides. */
const HELP = ['doctor', 'audit verify', 'audit show', 'audit checkpoint', 'mcp', 'simulate'];

/** One shell run of every command line, each printed as `<line>|<exit status>`. */
async function exitStatuses(lines: string[]): Promise<Map<string, number>> {
  const script = lines.map((line) => `asyncjob ${line} >/dev/null 2>&1; echo "${line}|$?"`).join('\n');
  const run = await runShell(script, { timeoutMs: 240_000 });
  expect(run.timedOut).toBe(false);
  return new Map(
    run.stdout
      .trim()
      .split('\n')
      .map((row) => [row.slice(0, row.lastIndexOf('|')), Number(row.slice(row.lastIndexOf('|') + 1))]),
  );
}

describe('the flags each command takes, as docs/cli.md says', () => {
  it('docs/cli.md names the same commands as this test', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8').replace(/\s+/g, ' ');
    const sentence = doc.slice(doc.indexOf('The commands that act on operations'), doc.indexOf('(and their own flags'));
    for (const command of [...EVERY_FLAG.map((c) => (c === 'adapter validate' ? 'adapter' : c)), ...HELP])
      expect(sentence, command).toContain(`\`${command}\``);
  });

  it("asyncjob's own usage and the flags table name the commands that refuse --json and --verbose", () => {
    for (const flag of ['--json', '--verbose']) {
      const commands = REFUSED.filter(([, f]) => f === flag).map(([c]) => c.replace(/ op-1$/, ''));
      // Where every audit subcommand refuses a flag, both texts say `audit`.
      const named = commands.includes('audit verify')
        ? [...new Set(commands.map((c) => (c.startsWith('audit') ? 'audit' : c)))]
        : commands;
      const usageLine = USAGE.split('\n').find((line) => line.includes(`${flag} (`))!;
      const tableCell = SHARED_FLAGS.find((f) => f.name === flag)!.usedBy.join(', ');
      for (const command of named) {
        expect(usageLine, `${flag} in asyncjob --help`).toContain(command);
        expect(tableCell, `${flag} in docs/configuration.md`).toContain(command);
      }
    }
  });

  it('takes --json, --verbose and --help together where it says so, and refuses the flags it does not list', async () => {
    const every = EVERY_FLAG.map((command) => `${command} --json --verbose --help`);
    const refused = REFUSED.map(([command, flag]) => `${command} ${flag}`);
    const help = HELP.map((command) => `${command} --help`);
    const statuses = await exitStatuses([...every, ...refused, ...help]);
    for (const line of [...every, ...help]) expect(statuses.get(line), line).toBe(0);
    for (const line of refused) expect(statuses.get(line), line).toBe(2);
  }, 300_000);
});
