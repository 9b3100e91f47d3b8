/**
 * The configuration schema (src/config.ts) is the one description of asyncjob's environment: `loadConfig` validates
 * the processes' part of it listing every problem, every variable carries its description and default, and every
 * ASYNCJOB_* / TEMPORAL_* variable src/ reads or names is described by it (and none it never uses).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  configSchema,
  describeSettings,
  environmentSchema,
  loadConfig,
  SETTING_GROUPS,
} from '../src/config';

const ROOT = path.join(__dirname, '..');

function files(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full, pattern);
    return pattern.test(name) ? [full] : [];
  });
}

/**
 * The ASYNCJOB_* / TEMPORAL_* variables `text` reads or names: a property read (`env.NAME`, `process.env.NAME`,
 * `config.NAME`), `env['NAME']`, a quoted name (`'NAME'`: a table of variable names, a preset's `secretEnv`); in
 * JSON (the presets) also `${NAME}`, which in code is a template's interpolation. Error codes are not variables,
 * nor are constants with such names (`TEMPORAL_BIN_VERSION`), which are never read as a property or quoted.
 */
function variablesIn(text: string, json: boolean): string[] {
  const name = '((?:ASYNCJOB|TEMPORAL)_[A-Z0-9_]*[A-Z0-9])';
  const pattern = json
    ? new RegExp(`"${name}"|\\$\\{${name}\\}`, 'g')
    : new RegExp(`\\??\\.${name}\\b|['"\`]${name}['"\`]|\\[['"]${name}['"]\\]`, 'g');
  return [...text.matchAll(pattern)]
    .map((match) => match.slice(1).find((group) => group !== undefined)!)
    .filter((found) => !found.startsWith('ASYNCJOB_ERR_'));
}

/** Every variable src/ reads or names, the schema's own families (src/config/) aside: they describe, not read. */
function variablesInSource(): Set<string> {
  const families = path.join(ROOT, 'src', 'config') + path.sep;
  const source = files(path.join(ROOT, 'src'), /\.(ts|json)$/).filter((file) => !file.startsWith(families));
  return new Set(source.flatMap((file) => variablesIn(readFileSync(file, 'utf8'), file.endsWith('.json'))));
}

describe('loadConfig', () => {
  it('has working defaults for the embedded setup', () => {
    expect(loadConfig({})).toMatchObject({
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      ASYNCJOB_STORE: 'sqlite:.asyncjob/asyncjob.db',
      ASYNCJOB_TASK_QUEUE: 'asyncjob',
      ASYNCJOB_WEBHOOK_HOST: '0.0.0.0',
    });
  });

  it('lists every problem at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({
        ASYNCJOB_STORE: 'mysql://x',
        ASYNCJOB_WEBHOOK_PORT: 'abc',
        TEMPORAL_TLS_CERT: '/c.pem',
        ASYNCJOB_LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['ASYNCJOB_STORE', 'ASYNCJOB_WEBHOOK_PORT', 'TEMPORAL_TLS_CERT', 'ASYNCJOB_LOG_LEVEL'])
      expect(problems).toContain(name);
  });
});

describe('the configuration schema describes every variable once', () => {
  it('every variable carries its group, readers, description and example; secrets are marked', () => {
    const settings = describeSettings();
    expect(settings.map((s) => s.name)).toEqual(Object.keys(environmentSchema.shape));
    for (const s of settings) {
      expect(Object.keys(SETTING_GROUPS), s.name).toContain(s.group);
      expect(s.usedBy.length, s.name).toBeGreaterThan(0);
      expect(s.description.length, s.name).toBeGreaterThan(5);
      expect(s.example.length, s.name).toBeGreaterThan(0);
    }
    const secrets = settings.filter((s) => s.secret).map((s) => s.name);
    expect(secrets).toEqual(expect.arrayContaining(['TEMPORAL_API_KEY', 'ASYNCJOB_AUDIT_HMAC_KEY']));
    expect(secrets).not.toContain('ASYNCJOB_AUDIT_HMAC_KEY_FILE');
  });

  it('the default it describes is the value loadConfig uses', () => {
    const loaded = loadConfig({}) as Record<string, unknown>;
    const described = describeSettings().filter((s) => s.name in configSchema.shape);
    expect(described.length).toBe(Object.keys(configSchema.shape).length);
    for (const s of described) expect(s.defaultValue, s.name).toEqual(loaded[s.name]);
  });

  it('finds a variable however src/ reads it, and not error codes or constants', () => {
    const code = [
      "env.ASYNCJOB_A; process.env['ASYNCJOB_B']; env?.TEMPORAL_C; config.ASYNCJOB_D;",
      "const names = { x: 'ASYNCJOB_E' }; throw code('ASYNCJOB_ERR_F');",
      'const TEMPORAL_BIN_VERSION = 1; use(TEMPORAL_BIN_VERSION);',
    ].join('\n');
    expect(variablesIn(code, false)).toEqual(['ASYNCJOB_A', 'ASYNCJOB_B', 'TEMPORAL_C', 'ASYNCJOB_D', 'ASYNCJOB_E']);
    expect(variablesIn('{ "baseUrl": "${ASYNCJOB_G}", "secretEnv": "ASYNCJOB_H" }', true)).toEqual([
      'ASYNCJOB_G',
      'ASYNCJOB_H',
    ]);
  });

  it('describes every ASYNCJOB_* and TEMPORAL_* variable src/ reads, and none it never uses', () => {
    const described = new Set(Object.keys(environmentSchema.shape));
    const read = variablesInSource();
    const undescribed = [...read].filter((name) => !described.has(name)).sort();
    expect(undescribed, 'variables read in src/ but not described by environmentSchema (src/config.ts)').toEqual([]);
    const unused = [...described].filter((name) => !read.has(name)).sort();
    expect(unused, 'variables environmentSchema describes that src/ never reads').toEqual([]);
  });
});
