/**
 * One configuration reference: the tables in docs/configuration.md are the ones rendered from the configuration
 * schema (src/config.ts: every variable, its default and description) and the commands' flags, which are every
 * flag the commands' usage texts show; `asyncjob worker --help` shows the worker's variables. That the schema
 * describes every variable src/ reads is test/config.test.ts.
 * After an intended change: `ASYNCJOB_WRITE_DOCS=1 npx vitest run test/doctor/settings.test.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_USAGE } from '../../src/audit/cli';
import { COMMAND_USAGE } from '../../src/cli/usage';
import { DOCTOR_USAGE } from '../../src/doctor/cli';
import { environmentSettings, FLAGS, renderSettingsTables, workerHelpText } from '../../src/doctor/settings';

const ROOT = path.join(__dirname, '..', '..');
const DOC = path.join(ROOT, 'docs', 'configuration.md');
const START = /<!-- settings-table:start[^>]*-->\n/;
const END = '<!-- settings-table:end -->';

describe('the configuration reference', () => {
  it('docs/configuration.md holds exactly the tables rendered from the configuration schema and the flags', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = START.exec(doc);
    expect(start, 'docs/configuration.md has the settings-table markers').not.toBeNull();
    const from = start!.index + start![0].length;
    const to = doc.indexOf(END, from);
    expect(to).toBeGreaterThan(-1);
    const table = `${renderSettingsTables()}\n`;
    if (process.env.ASYNCJOB_WRITE_DOCS === '1') writeFileSync(DOC, doc.slice(0, from) + table + doc.slice(to));
    else
      expect(doc.slice(from, to), 'regenerate: ASYNCJOB_WRITE_DOCS=1 npx vitest run test/doctor/settings.test.ts').toBe(
        table,
      );
  });

  it("lists the flags the commands' usage texts show, and no others", () => {
    const flagsOf = (text: string) =>
      new Set(
        [...text.matchAll(/--[a-z][a-z-]*/g)]
          .map((m) => m[0])
          .filter((f) => !['--json', '--verbose', '--help'].includes(f)),
      );
    const usages: Record<string, string> = {
      start: COMMAND_USAGE.start!,
      watch: COMMAND_USAGE.watch!,
      cancel: COMMAND_USAGE.cancel!,
      decide: COMMAND_USAGE.decide!,
      list: COMMAND_USAGE.list!,
      result: COMMAND_USAGE.result!,
      adapter: COMMAND_USAGE.adapter!,
      bundle: COMMAND_USAGE.bundle!,
      'replay-check': COMMAND_USAGE['replay-check']!,
      keys: COMMAND_USAGE.keys!,
      audit: AUDIT_USAGE,
      doctor: DOCTOR_USAGE,
    };
    for (const [command, usage] of Object.entries(usages)) {
      const documented = new Set(FLAGS.filter((f) => f.usedBy.includes(command as never)).map((f) => f.name));
      const shown = flagsOf(usage);
      expect(
        [...shown].filter((f) => !documented.has(f)),
        `flags of ${command} missing from FLAGS`,
      ).toEqual([]);
      expect(
        [...documented].filter((f) => !shown.has(f) && !['--json', '--verbose', '--help'].includes(f)),
        `flags in FLAGS that ${command}'s usage does not show`,
      ).toEqual([]);
    }
  });

  it('has one row per flag and user, each with a meaning and an example', () => {
    const keys = FLAGS.map((f) => `${f.name} ${f.usedBy.join(',')}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const f of FLAGS) {
      expect(f.name, f.name).toMatch(/^--[a-z][a-z-]*$/);
      expect(f.meaning.length, f.name).toBeGreaterThan(5);
      expect(f.example.length, f.name).toBeGreaterThan(0);
      expect(f.usedBy.length, f.name).toBeGreaterThan(0);
    }
  });

  it("shows each variable's default from the schema, and what holds when it has none", () => {
    const table = renderSettingsTables();
    expect(table).toContain('| `TEMPORAL_ADDRESS` | worker, client, CLI, doctor, audit, mcp | `127.0.0.1:7233` |');
    expect(table).toContain('| `ASYNCJOB_POLL_LOOP_MAX_WAIT_MS` | worker | `30000` |');
    expect(table).toContain('| `ASYNCJOB_PROVIDER_RATE_LIMIT` | worker | unlimited |');
    expect(table).toContain('| `TEMPORAL_API_KEY` (secret) |');
    for (const title of ['### Temporal connection', '### The worker', '### Audit keys', '### Flags'])
      expect(table).toContain(`${title}\n`);
  });

  it('asyncjob worker --help shows every variable of the worker and the receiver, and the exit codes', () => {
    const help = workerHelpText();
    for (const s of environmentSettings().filter((x) => x.usedBy.includes('worker') || x.usedBy.includes('receiver')))
      expect(help).toContain(s.name);
    expect(help).toMatch(/TEMPORAL_API_KEY +API key \(Temporal Cloud\); turns TLS on; a secret, never printed/);
    expect(help).not.toContain('ASYNCJOB_UI_PORT');
    expect(help).toContain('exits 2 naming every problem');
    expect(help).toMatch(/exit codes: 0 .*2 bad environment.*5 Temporal cannot be reached/s);
    expect(help).not.toContain('`');
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
  });
});
