/**
 * `npm run schema`: writes the `asyncjob` Nexus service's operations as JSON Schemas to `schema/nexus/`
 * (`src/nexus/json-schema.ts`, checked by test/nexus/schemas.test.ts), and the provider contract as JSON Schema (draft-07, the form editors support best) to
 * `schema/provider-contract.schema.json`, from the zod schema the loader validates with (`providerContractSchema`,
 * in its INPUT form: what a user writes, defaults optional) and the field reference of
 * docs/writing-an-adapter.md (each field's description). `npm run schema -- --check` exits 1 when the committed
 * file differs from what would be written; test/adapters/providers/schema.test.ts checks the same.
 *
 * What the JSON Schema checks: every key, type, enum, pattern, length and count limit, and which fields are
 * required. What only the loader checks (zod refinements have no JSON Schema form): field-path syntax, path
 * template placeholders, the cross-field rules (e.g. `status.useStatusUrl` without a status path needs
 * `create.statusUrl`), inline secrets, and `${VAR}` substitution. A document naming a `preset:` may leave out
 * anything the preset supplies, give any part of a section, and remove a preset's key with `null`: for such a
 * document the schema checks the keys and types it gives, not completeness.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { providerContractSchema } from '../src/adapters/providers/contract';
import { presetNames } from '../src/adapters/providers/presets/expand';
import { pollPolicySchema } from '../src/core/policy';
import { NEXUS_SCHEMA_DIR, nexusJsonSchemas, renderNexusSchema } from '../src/nexus/json-schema';

type Json = Record<string, unknown>;

const ROOT = path.join(__dirname, '..');
/** Where the schema is written. */
export const SCHEMA_FILE = path.join(ROOT, 'schema', 'provider-contract.schema.json');
/** The document whose reference tables describe every field. */
export const REFERENCE_DOC = path.join(ROOT, 'docs', 'writing-an-adapter.md');

/** One row of the field reference: `| \`path\` | type | default | rule | meaning |`. */
export interface ReferenceRow {
  path: string;
  type: string;
  default: string;
  rule: string;
  meaning: string;
}

/**
 * The rows of the field reference tables of docs/writing-an-adapter.md (the section "## Field reference", up to
 * the next "## " heading): every table row whose first cell is one backticked field path.
 */
export function readReference(markdown: string): ReferenceRow[] {
  const start = markdown.indexOf('\n## Field reference');
  if (start < 0) throw new Error('docs/writing-an-adapter.md has no "## Field reference" section');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const rows: ReferenceRow[] = [];
  for (const line of section.split('\n')) {
    const match = /^\|\s*`([^`]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (match === null) continue;
    const cells = match[2]!.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
    if (cells.length !== 4) throw new Error(`field reference row for ${match[1]} has ${cells.length + 1} cells, not 5`);
    rows.push({ path: match[1]!, type: cells[0]!, default: cells[1]!, rule: cells[2]!, meaning: cells[3]! });
  }
  return rows;
}

/** A named reading takes the same fields as the status section's own rules, documented once under `status.`. */
export function referencePathOf(fieldPath: string): string {
  return fieldPath.replace(/^status\.readings\.<name>\./, 'status.');
}

/**
 * Every field path of a JSON Schema object (`create.idempotencyToken.in`), with the schemas found at it: through
 * object properties, the branches of a union, and the values of a record whose values are objects
 * (`status.readings.<name>.stateField`); not into list items (their shapes are described in prose).
 */
export function fieldPaths(schema: Json): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const s = node as Json;
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      if (Array.isArray(s[key])) for (const branch of s[key] as unknown[]) walk(branch, at);
    }
    const properties = s.properties as Record<string, Json> | undefined;
    for (const [name, child] of Object.entries(properties ?? {})) {
      const here = at === '' ? name : `${at}.${name}`;
      out.set(here, [...(out.get(here) ?? []), child]);
      walk(child, here);
    }
    const values = s.additionalProperties;
    if (values !== null && typeof values === 'object' && (values as Json).properties !== undefined)
      walk(values, `${at}.<name>`);
  };
  walk(schema, '');
  return out;
}

function description(row: ReferenceRow): string {
  const text = `${row.meaning}${row.rule === '' || row.rule === '-' ? '' : ` (${row.rule})`}`;
  return text.replace(/`/g, '');
}

/** `{ anyOf: [schema, null] }`: with a preset, `null` removes the preset's key. */
function orNull(schema: Json): Json {
  const { description: text, default: fallback, ...rest } = schema;
  return {
    ...(text !== undefined ? { description: text } : {}),
    anyOf: [rest, { type: 'null' }],
    ...(fallback !== undefined ? { default: fallback } : {}),
  };
}

/**
 * The schema of a document with a preset: every object may be partial (the preset supplies the rest, merged key
 * by key) and every property may be `null` (removes the preset's). Lists replace the preset's whole, so their
 * items stay complete; `oneOf` becomes `anyOf` since partial branches may overlap.
 */
function relax(schema: Json): Json {
  const out: Json = { ...schema };
  delete out.required;
  if (Array.isArray(out.oneOf)) {
    out.anyOf = (out.oneOf as Json[]).map(relax);
    delete out.oneOf;
  }
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as Json[]).map(relax);
  if (out.properties !== undefined) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, Json>).map(([k, v]) => [k, orNull(relax(v))]),
    );
  }
  if (out.additionalProperties !== null && typeof out.additionalProperties === 'object')
    out.additionalProperties = relax(out.additionalProperties as Json);
  return out;
}

function withoutMeta(schema: Json): Json {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** The provider contract JSON Schema, with each field described by `reference`. Pure apart from building zod schemas. */
export function buildContractJsonSchema(reference: readonly ReferenceRow[]): Json {
  const full = withoutMeta(z.toJSONSchema(providerContractSchema, { io: 'input', target: 'draft-07' }) as Json);
  const properties = full.properties as Record<string, Json>;
  // `policy` is a record checked by a refinement against the core poll policy; publish the policy's own shape.
  properties.policy = withoutMeta(z.toJSONSchema(pollPolicySchema, { io: 'input', target: 'draft-07' }) as Json);
  properties.preset = { type: 'string', enum: presetNames() };
  // A JSON contract may name this schema for editors; the loader ignores the key.
  properties.$schema = {
    type: 'string',
    description: 'The JSON Schema this document follows (for editors); ignored by the loader.',
  };
  const rows = new Map(reference.map((row) => [row.path, row]));
  for (const [fieldPath, schemas] of fieldPaths(full)) {
    const row = rows.get(referencePathOf(fieldPath));
    if (row !== undefined) for (const s of schemas) s.description = description(row);
  }
  const { preset, $schema, ...withoutPreset } = properties;
  const plain: Json = { ...full, properties: { $schema, preset, ...withoutPreset } };
  const { preset: _nullable, $schema: _meta, ...relaxedRest } = relax(full).properties as Record<string, Json>;
  const relaxed: Json = { ...relax(full), properties: { $schema, preset, ...relaxedRest } };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'asyncjob provider contract',
    description:
      'A provider\'s HTTP contract for asyncjob (docs/writing-an-adapter.md). Without "preset" the document is complete; with one, it is merged over the preset, may leave out what the preset supplies and remove a preset key with null. The loader checks more (asyncjob adapter validate FILE).',
    type: 'object',
    if: { properties: { preset: {} }, required: ['preset'] },
    then: { ...relaxed, required: ['preset'] },
    else: plain,
  };
}

/** The file's text: the schema as indented JSON with a final newline. */
export function renderSchema(schema: Json): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** The text `npm run schema` writes, from the current zod schema and reference doc. */
export function generateSchemaText(): string {
  return renderSchema(buildContractJsonSchema(readReference(readFileSync(REFERENCE_DOC, 'utf8'))));
}

/** Every file `npm run schema` writes, by path from the root: the provider contract and `schema/nexus/`. */
export function generateSchemaFiles(): Map<string, string> {
  const files = new Map([[path.relative(ROOT, SCHEMA_FILE), generateSchemaText()]]);
  for (const [file, schema] of Object.entries(nexusJsonSchemas()))
    files.set(path.join(NEXUS_SCHEMA_DIR, file), renderNexusSchema(schema));
  return files;
}

if (require.main === module) {
  const files = generateSchemaFiles();
  if (process.argv.includes('--check')) {
    const stale = [...files].filter(([file, text]) => {
      try {
        return readFileSync(path.join(ROOT, file), 'utf8') !== text;
      } catch {
        return true;
      }
    });
    for (const [file] of stale) console.error(`schema: ${file} is out of date: run npm run schema`);
    if (stale.length > 0) process.exit(1);
    console.log(`schema: ${files.size} files up to date`);
  } else {
    for (const [file, text] of files) {
      mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
      writeFileSync(path.join(ROOT, file), text);
      console.log(`schema: wrote ${file}`);
    }
  }
}
