/**
 * One configuration reference: the table in docs/configuration.md is the one rendered from the code's list of
 * settings; the list names every variable the code reads (and none it does not) and every flag the commands'
 * usage texts show; `asyncjob worker --help` shows the worker's variables.
 * After an intended change of the list: `ASYNCJOB_WRITE_DOCS=1 npx vitest run test/doctor/settings.test.ts`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_USAGE } from '../../src/audit/cli';
import { COMMAND_USAGE } from '../../src/cli/usage';
import { configSchema } from '../../src/config';
import { DOCTOR_USAGE } from '../../src/doctor/cli';
import { environmentVariables, renderSettingsTable, SETTINGS, workerHelpText } from '../../src/doctor/settings';

const ROOT = path.join(__dirname, '..', '..');
const DOC = path.join(ROOT, 'docs', 'configuration.md');
const START = /<!-- settings-table:start[^>]*-->\n/;
const END = '<!-- settings-table:end -->';

function files(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full, pattern);
    return pattern.test(name) ? [full] : [];
  });
}

/** String literals that look like variables but are not read from the environment (stable error codes). */
const NOT_VARIABLES = new Set(['ASYNCJOB_BODY_TOO_LARGE', 'ASYNCJOB_SINK_FAILED']);

/**
 * Every ASYNCJOB_* / TEMPORAL_* name src/ reads or names as a variable: `env.NAME`, `env['NAME']`, a string
 * literal `'NAME'` (settings tables, contract presets' `secretEnv`), `${NAME}` in the presets' `baseUrl`; error codes
 * aside. Constants with such names (`TEMPORAL_BIN_VERSION`) are not variables and are not matched.
 */
function namesInSource(): Set<string> {
  const names = new Set<string>();
  const name = '((?:ASYNCJOB|TEMPORAL)_[A-Z0-9_]*[A-Z0-9])';
  const inCode = new RegExp(`env\\??\\.${name}\\b|['"\`]${name}['"\`]|env\\[['"]${name}['"]\\]`, 'g');
  // In JSON (the presets) also `${NAME}`; in code that is a template's interpolation of a constant.
  const inJson = new RegExp(`"${name}"|\\$\\{${name}\\}`, 'g');
  // The list itself (settings.ts and its families in settings/) names every variable: it is not evidence of a read.
  const own = path.join(ROOT, 'src', 'doctor', 'settings.ts');
  const ownFamilies = path.join(ROOT, 'src', 'doctor', 'settings') + path.sep;
  const source = files(path.join(ROOT, 'src'), /\.(ts|json)$/).filter((f) => f !== own && !f.startsWith(ownFamilies));
  for (const file of source) {
    for (const match of readFileSync(file, 'utf8').matchAll(file.endsWith('.json') ? inJson : inCode)) {
      const found = match.slice(1).find((g) => g !== undefined)!;
      if (found.startsWith('ASYNCJOB_ERR_') || NOT_VARIABLES.has(found)) continue;
      names.add(found);
    }
  }
  // The configuration schema's keys are the variables `loadConfig` reads.
  for (const key of Object.keys(configSchema.shape)) names.add(key);
  return names;
}

describe('the configuration reference', () => {
  it('docs/configuration.md holds exactly the table rendered from src/doctor/settings.ts', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = START.exec(doc);
    expect(start, 'docs/configuration.md has the settings-table markers').not.toBeNull();
    const from = start!.index + start![0].length;
    const to = doc.indexOf(END, from);
    expect(to).toBeGreaterThan(-1);
    const table = `${renderSettingsTable()}\n`;
    if (process.env.ASYNCJOB_WRITE_DOCS === '1') writeFileSync(DOC, doc.slice(0, from) + table + doc.slice(to));
    else
      expect(doc.slice(from, to), 'regenerate: ASYNCJOB_WRITE_DOCS=1 npx vitest run test/doctor/settings.test.ts').toBe(
        table,
      );
  });

  it('lists every variable the code reads, and none it does not', () => {
    const listed = new Set(environmentVariables());
    const inSource = namesInSource();
    const undocumented = [...inSource].filter((n) => !listed.has(n)).sort();
    expect(undocumented, 'variables read in src/ but missing from SETTINGS (src/doctor/settings.ts)').toEqual([]);
    const stale = [...listed].filter((n) => !inSource.has(n)).sort();
    expect(stale, 'variables in SETTINGS that src/ never names').toEqual([]);
  });

  it('lists every variable of the configuration schema', () => {
    const listed = new Set(environmentVariables());
    expect(Object.keys(configSchema.shape).filter((n) => !listed.has(n))).toEqual([]);
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
      adapter: COMMAND_USAGE.adapter!,
      bundle: COMMAND_USAGE.bundle!,
      'replay-check': COMMAND_USAGE['replay-check']!,
      audit: AUDIT_USAGE,
      doctor: DOCTOR_USAGE,
    };
    for (const [command, usage] of Object.entries(usages)) {
      const documented = new Set(
        SETTINGS.filter((s) => s.name.startsWith('--') && s.usedBy.includes(command as never)).map((s) => s.name),
      );
      const shown = flagsOf(usage);
      expect(
        [...shown].filter((f) => !documented.has(f)),
        `flags of ${command} missing from SETTINGS`,
      ).toEqual([]);
      expect(
        [...documented].filter((f) => !shown.has(f) && !['--json', '--verbose', '--help'].includes(f)),
        `flags in SETTINGS that ${command}'s usage does not show`,
      ).toEqual([]);
    }
  });

  it('has one row per setting and user, each with a meaning and an example', () => {
    const keys = SETTINGS.map((s) => `${s.name} ${s.usedBy.join(',')}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const s of SETTINGS) {
      expect(s.meaning.length, s.name).toBeGreaterThan(5);
      expect(s.example.length, s.name).toBeGreaterThan(0);
      expect(s.usedBy.length, s.name).toBeGreaterThan(0);
    }
  });

  it('asyncjob worker --help shows every variable of the worker and the receiver, and the exit codes', () => {
    const help = workerHelpText();
    for (const s of SETTINGS.filter(
      (x) => !x.name.startsWith('-') && (x.usedBy.includes('worker') || x.usedBy.includes('receiver')),
    ))
      expect(help).toContain(s.name);
    expect(help).not.toContain('ASYNCJOB_UI_PORT');
    expect(help).toContain('exits 2 naming every problem');
    expect(help).toMatch(/exit codes: 0 .*2 bad environment.*5 Temporal cannot be reached/s);
    expect(help).not.toContain('`');
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
  });
});
