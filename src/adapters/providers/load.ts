/**
 * Loading a provider contract by name or path: a JSON or YAML document, validated with every problem reported
 * at once (`provider contract "x": status.stateTable: Required`), inline secrets refused (T4), and `${ENV_VAR}`
 * substituted in `baseUrl` only (so a preset can point at a simulator started on a random port).
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { providerContractSchema, type ProviderContract } from './contract';
import { ProviderContractError, formatIssuePath, type ContractIssue } from './errors';
import { BUILT_IN_PRESETS } from './presets';
import { expandPreset } from './presets/expand';

/** Options of {@link loadProviderContract} and {@link parseProviderContract}. */
export interface LoadProviderContractOptions {
  /** Directories searched first, in order, for `<name>.json|.yaml|.yml`. */
  searchDirs?: readonly string[];
  /** A directory of presets searched after `searchDirs`; the built-in presets are the last resort. */
  presetsDir?: string;
  /** Replaces the document's `baseUrl` (e.g. the simulator's `http://127.0.0.1:<port>`). */
  baseUrl?: string;
  /** The environment for `${VAR}` in `baseUrl`; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

const SECRET_KEY =
  /^(token|secret|password|passwd|pwd|pass|api[-_]?key|access[-_]?token|refresh[-_]?token|auth[-_]?token|bearer([-_]?token)?|client[-_]?secret|private[-_]?key|secret[-_]?(value|key)|authorization)$/i;
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$/i;
const BEARER_VALUE = /^\s*(bearer|basic)\s+\S+/i;

/**
 * Finds fields that look like a secret written inline (a `token`/`password`/`apiKey` string, a literal or
 * templated `Authorization`/`X-Api-Key`... header in any call's headers or the contract-wide ones, a `Bearer ...`
 * value). The values are never echoed. Pure.
 */
function findInlineSecrets(document: unknown): ContractIssue[] {
  const issues: ContractIssue[] = [];
  const walk = (value: unknown, at: PropertyKey[], depth: number): void => {
    if (depth > 64) return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...at, index], depth + 1));
      return;
    }
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'string' && at[at.length - 1] !== 'description' && BEARER_VALUE.test(value)) {
        issues.push({
          path: formatIssuePath(at),
          message:
            'looks like an inline credential; name the secret by reference (credential.secretEnv or credential.secretFile)',
        });
      }
      return;
    }
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = [...at, key];
      const isLiteralSecretHeader =
        at[at.length - 1] === 'headers' &&
        SECRET_HEADER.test(key) &&
        child !== null &&
        typeof child === 'object' &&
        ('value' in child || 'template' in child);
      if (
        (SECRET_KEY.test(key) && (typeof child === 'string' || typeof child === 'number') && String(child) !== '') ||
        isLiteralSecretHeader
      ) {
        issues.push({
          path: formatIssuePath(childPath),
          message:
            'looks like an inline secret; the contract names credentials by reference only (credential.secretEnv or credential.secretFile)',
        });
        continue;
      }
      walk(child, childPath, depth + 1);
    }
  };
  walk(document, [], 0);
  return issues;
}

/** Substitutes `${VAR}` in a base URL; a missing variable is an issue. Pure apart from reading `env`. */
function substituteEnv(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  issues: ContractIssue[],
): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const found = env[name];
    if (found === undefined || found === '') {
      issues.push({ path: 'baseUrl', message: `environment variable ${name} is not set` });
      return '';
    }
    return found;
  });
}

/**
 * Validates a parsed contract document (an object from JSON or YAML). Throws a {@link ProviderContractError}
 * (`ASYNCJOB_ERR_ADAPTER_INVALID`) listing every problem at once. Safe to repeat.
 */
export function parseProviderContract(
  document: unknown,
  source: string,
  options: Pick<LoadProviderContractOptions, 'baseUrl' | 'env'> = {},
): ProviderContract {
  const issues: ContractIssue[] = [];
  let candidate = document;
  if (document !== null && typeof document === 'object' && !Array.isArray(document)) {
    const copy = { ...expandPreset(document as Record<string, unknown>, issues) };
    if (options.baseUrl !== undefined) copy.baseUrl = options.baseUrl;
    else if (typeof copy.baseUrl === 'string')
      copy.baseUrl = substituteEnv(copy.baseUrl, options.env ?? process.env, issues);
    candidate = copy;
  }
  issues.push(...findInlineSecrets(candidate));
  const parsed = providerContractSchema.safeParse(candidate);
  if (!parsed.success) {
    // A missing variable already explains an empty baseUrl.
    const baseUrlExplained = issues.some((i) => i.path === 'baseUrl');
    for (const issue of parsed.error.issues) {
      if (issue.path.length === 1 && issue.path[0] === 'baseUrl' && baseUrlExplained) continue;
      const message =
        issue.code === 'invalid_type' && issue.message.includes('received undefined') ? 'Required' : issue.message;
      issues.push({ path: formatIssuePath(issue.path), message });
    }
  }
  if (issues.length > 0 || !parsed.success)
    throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_INVALID', source, issues);
  return parsed.data;
}

function looksLikePath(nameOrPath: string): boolean {
  return nameOrPath.includes('/') || nameOrPath.includes('\\') || /\.(json|ya?ml)$/i.test(nameOrPath);
}

/** A contract is a small document; anything larger is refused before parsing. */
const MAX_DOCUMENT_BYTES = 1_048_576;

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_DOCUMENT_BYTES) {
      throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_INVALID', file, [
        { path: '', message: `the document is larger than ${MAX_DOCUMENT_BYTES} bytes` },
      ]);
    }
    return bytes.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseDocument(text: string, file: string, source: string): unknown {
  try {
    return /\.json$/i.test(file) ? (JSON.parse(text) as unknown) : (parseYaml(text, { maxAliasCount: 100 }) as unknown);
  } catch (error) {
    throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_INVALID', source, [
      {
        path: '',
        message: `cannot parse ${path.basename(file)}: ${(error as Error).message.split('\n')[0] ?? 'syntax error'}`,
      },
    ]);
  }
}

/**
 * Loads a provider contract by path (contains `/` or ends in `.json`/`.yaml`/`.yml`) or by name (searched as
 * `<name>.json|.yaml|.yml` in `searchDirs`, then `presetsDir`, then the built-in presets `rest`, `lro`,
 * `operation-location`). Throws `ASYNCJOB_ERR_ADAPTER_NOT_FOUND` or `ASYNCJOB_ERR_ADAPTER_INVALID` (every
 * problem listed). Reads files only; safe to repeat.
 */
export async function loadProviderContract(
  nameOrPath: string,
  options: LoadProviderContractOptions = {},
): Promise<ProviderContract> {
  if (looksLikePath(nameOrPath)) {
    const file = path.resolve(nameOrPath);
    const text = await readIfExists(file);
    if (text === undefined)
      throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_NOT_FOUND', nameOrPath, [
        { path: '', message: `no file ${file}` },
      ]);
    return parseProviderContract(parseDocument(text, file, nameOrPath), nameOrPath, options);
  }
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(nameOrPath)) {
    throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_NOT_FOUND', nameOrPath, [
      { path: '', message: 'a contract name is lower-case letters, digits, ".", "_" and "-"' },
    ]);
  }
  const dirs = [...(options.searchDirs ?? []), ...(options.presetsDir === undefined ? [] : [options.presetsDir])];
  for (const dir of dirs) {
    for (const ext of ['.json', '.yaml', '.yml']) {
      const file = path.resolve(dir, nameOrPath + ext);
      const text = await readIfExists(file);
      if (text !== undefined) return parseProviderContract(parseDocument(text, file, nameOrPath), nameOrPath, options);
    }
  }
  const preset = BUILT_IN_PRESETS[nameOrPath];
  if (preset !== undefined) return parseProviderContract(structuredClone(preset), nameOrPath, options);
  throw new ProviderContractError('ASYNCJOB_ERR_ADAPTER_NOT_FOUND', nameOrPath, [
    {
      path: '',
      message: `not found in ${dirs.length === 0 ? 'no search directory' : dirs.join(', ')} nor among the presets (${Object.keys(BUILT_IN_PRESETS).join(', ')})`,
    },
  ]);
}
