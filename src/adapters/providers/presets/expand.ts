/**
 * `preset:` in a contract document: the document is merged over a preset, either a convention preset
 * (`azure-lro`, `google-lro`, `http-202-location`, computed for the document's create method) or one of the
 * built-in simulator dialects (`rest`, `lro`, `operation-location`). Objects merge key by key, the document
 * winning; a list or a value in the document replaces the preset's; `null` removes a preset's key. Pure.
 */
import { type ContractIssue } from '../errors';
import { CONVENTION_PRESET_NAMES, conventionPreset, type ConventionPresetName } from './conventions';
import { BUILT_IN_PRESETS } from './index';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Merges `over` onto `base` (see the module comment). */
function mergeDocuments(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else out[key] = key in base ? mergeDocuments(base[key], value) : value;
  }
  return out;
}

/** Every preset a document may name. */
export function presetNames(): string[] {
  return [...CONVENTION_PRESET_NAMES, ...Object.keys(BUILT_IN_PRESETS)];
}

/** The document with its `preset:` applied; an unknown preset is an issue and the document is returned as given. */
export function expandPreset(document: Record<string, unknown>, issues: ContractIssue[]): Record<string, unknown> {
  // `$schema` points editors at the published JSON Schema; it is not part of the contract.
  const { preset, $schema: _schema, ...rest } = document;
  if (preset === undefined) return rest;
  if (typeof preset !== 'string') {
    issues.push({ path: 'preset', message: 'a preset is named by a string' });
    return rest;
  }
  const create = isObject(rest.create) ? rest.create : {};
  const method = typeof create.method === 'string' ? create.method : 'POST';
  let base: unknown;
  if ((CONVENTION_PRESET_NAMES as readonly string[]).includes(preset))
    base = conventionPreset(preset as ConventionPresetName, method);
  else if (BUILT_IN_PRESETS[preset] !== undefined) base = structuredClone(BUILT_IN_PRESETS[preset]);
  else {
    issues.push({ path: 'preset', message: `no preset "${preset}" (known: ${presetNames().join(', ')})` });
    return rest;
  }
  return mergeDocuments(base, rest) as Record<string, unknown>;
}
