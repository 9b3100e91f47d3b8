/**
 * The published JSON Schema of the provider contract (schema/provider-contract.schema.json): up to date with the
 * zod schema and the field reference (`npm run schema`), every field documented, and every example document of
 * the repository (docs/, examples/, the presets, test/conformance/) valid against it and against the loader.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PRESETS, parseProviderContract } from '../../../src/adapters/providers';
import {
  buildContractJsonSchema,
  fieldPaths,
  generateSchemaText,
  readReference,
  REFERENCE_DOC,
  referencePathOf,
  SCHEMA_FILE,
} from '../../../scripts/schema';

const ROOT = path.join(__dirname, '..', '..', '..');
const committed = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(committed);

function errors(document: unknown): string[] {
  return validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

/** A contract document (not a simulator scenario or a fragment): it names itself and says how to create, or a preset. */
function isContract(document: unknown): document is Record<string, unknown> {
  return (
    document !== null &&
    typeof document === 'object' &&
    !Array.isArray(document) &&
    'name' in document &&
    ('create' in document || 'preset' in document)
  );
}

/** Every fenced ```yaml block with a top-level `name:` line, per Markdown file under docs/ and in the README. */
function documentedContracts(): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  const files = [
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'README.md',
  ];
  for (const file of files) {
    const markdown = readFileSync(path.join(ROOT, file), 'utf8');
    for (const match of markdown.matchAll(/```yaml\n([\s\S]*?)```/g)) {
      const text = match[1]!;
      const name = /^name: *(\S+)/m.exec(text);
      if (name !== null) out.push({ where: `${file} (${name[1]})`, text });
    }
  }
  return out;
}

/** Every JSON or YAML file that is a contract document, under examples/ and test/conformance/ (when present). */
function exampleFiles(): { where: string; document: Record<string, unknown> }[] {
  const out: { where: string; document: Record<string, unknown> }[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(json|ya?ml)$/i.test(entry.name)) {
        const text = readFileSync(full, 'utf8');
        if (/\{\{|<[A-Z_]+>/.test(text)) continue; // a template with placeholders, not a full document
        let document: unknown;
        try {
          document = parseYaml(text);
        } catch {
          continue; // a template with placeholders, not a document
        }
        if (isContract(document)) out.push({ where: path.relative(ROOT, full), document });
      }
    }
  };
  walk(path.join(ROOT, 'examples'));
  walk(path.join(ROOT, 'test', 'conformance'));
  return out;
}

/** Loads a document as the worker would, with a stand-in for any `${VAR}` of its base URL. */
function load(document: Record<string, unknown>, where: string) {
  return parseProviderContract(document, where, { env: new Proxy({}, { get: () => 'https://stand-in.example' }) });
}

describe('schema/provider-contract.schema.json', () => {
  it('is what npm run schema generates (run it after changing the contract schema or the field reference)', () => {
    expect(
      readFileSync(SCHEMA_FILE, 'utf8'),
      'schema/provider-contract.schema.json is out of date: run npm run schema',
    ).toBe(generateSchemaText());
  });

  it('documents every field: each field of the schema has a row in the field reference, each row names a field', () => {
    const rows = readReference(readFileSync(REFERENCE_DOC, 'utf8'));
    const schema = buildContractJsonSchema(rows);
    const paths = new Set([...fieldPaths(schema.else as Record<string, unknown>).keys()].map(referencePathOf));
    const documented = new Set(rows.map((r) => r.path));
    expect(
      [...paths].filter((p) => !documented.has(p)),
      'fields without a row in docs/writing-an-adapter.md "Field reference"',
    ).toEqual([]);
    expect(
      [...documented].filter((p) => !paths.has(p)),
      'rows naming no field of the contract',
    ).toEqual([]);
    expect(rows.length, 'one row per field').toBe(documented.size);
  });

  it("the reference's defaults are the schema's", () => {
    const rows = readReference(readFileSync(REFERENCE_DOC, 'utf8'));
    const byPath = fieldPaths(buildContractJsonSchema(rows).else as Record<string, unknown>);
    const normal = (text: string): string => text.replace(/["'\s`]/g, '');
    const wrong: string[] = [];
    for (const row of rows) {
      const defaults = [
        ...new Set(
          (byPath.get(row.path) ?? []).filter((s) => 'default' in s).map((s) => normal(JSON.stringify(s.default))),
        ),
      ];
      const written = normal(/`([^`]*)`/.exec(row.default)?.[1] ?? row.default);
      if (defaults.length > 0 && !defaults.includes(written))
        wrong.push(`${row.path}: the reference says "${row.default}", the schema ${defaults.join(' or ')}`);
    }
    expect(wrong).toEqual([]);
  });

  it('is draft-07, with descriptions taken from the reference', () => {
    expect(committed.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const plain = committed.else as { properties: Record<string, { description?: string }> };
    expect(plain.properties.collectSafeToRepeat?.description).toMatch(/^Whether fetching the result may be repeated/);
  });

  it('refuses what the loader refuses at the field level: a misspelt key, a missing required field, a wrong type, an unknown preset', () => {
    const rest = structuredClone(BUILT_IN_PRESETS.rest) as Record<string, unknown>;
    expect(errors(rest)).toEqual([]);
    expect(errors({ ...rest, colectSafeToRepeat: true })).toContain('/ must NOT have additional properties');
    const { collectSafeToRepeat: _dropped, ...incomplete } = rest;
    expect(errors(incomplete)).toContain("/ must have required property 'collectSafeToRepeat'");
    expect(errors({ ...rest, cookies: 'yes' })).toContain('/cookies must be boolean');
    expect(
      errors({ preset: 'azure', name: 'x' }).some((e) =>
        e.startsWith('/preset must be equal to one of the allowed values'),
      ),
    ).toBe(true);
  });

  it('with a preset: fields the preset supplies may be left out, a section may be partial, and null removes a key', () => {
    const document = {
      preset: 'azure-lro',
      name: 'things',
      baseUrl: 'https://management.example.com',
      credential: { scheme: 'none' },
      create: { method: 'POST', path: '/things/export' },
      status: { readings: { monitor: { result: [{ from: 'inline' }] } } },
      result: { required: false },
      cancel: null,
    };
    expect(errors(document)).toEqual([]);
    expect(() => load(document, 'things')).not.toThrow();
    // Keys and types are still checked.
    expect(errors({ ...document, create: { method: 'GET', path: '/x' } }).length).toBeGreaterThan(0);
    expect(errors({ ...document, status: { readings: { monitor: { stateFeld: 'status' } } } }).length).toBeGreaterThan(
      0,
    );
    // A list replaces the preset's whole: its items stay complete.
    expect(
      errors({ ...document, status: { readings: { monitor: { result: [{ field: 'x' }] } } } }).length,
    ).toBeGreaterThan(0);
  });

  it('accepts every built-in preset document', () => {
    for (const [name, document] of Object.entries(BUILT_IN_PRESETS)) expect(errors(document), name).toEqual([]);
  });

  it('accepts every contract in the docs (the Acme walkthrough and each recipe), and the loader does too', () => {
    const blocks = documentedContracts();
    expect(blocks.map((b) => b.where)).toEqual(
      expect.arrayContaining([
        'docs/writing-an-adapter.md (acme-exports)',
        'docs/writing-an-adapter.md (storage-accounts)',
        'docs/writing-an-adapter.md (document-batches)',
        'docs/writing-an-adapter.md (batch-translate)',
        'docs/writing-an-adapter.md (report-builder)',
        'docs/writing-an-adapter.md (video-renders)',
        'docs/writing-an-adapter.md (payouts)',
        'README.md (vm-images)',
      ]),
    );
    for (const block of blocks) {
      const document = parseYaml(block.text) as Record<string, unknown>;
      expect(errors(document), block.where).toEqual([]);
      expect(() => load(document, block.where), block.where).not.toThrow();
    }
  });

  it('accepts every contract document under examples/ and test/conformance/', () => {
    const found = exampleFiles();
    if (existsSync(path.join(ROOT, 'test', 'conformance')))
      expect(found.some((f) => f.where.startsWith(path.join('test', 'conformance')))).toBe(true);
    for (const { where, document } of found) {
      expect(errors(document), where).toEqual([]);
      expect(() => load(document, where), where).not.toThrow();
    }
  });
});
