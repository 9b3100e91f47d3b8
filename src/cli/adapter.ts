/**
 * `asyncjob adapter validate FILE...` and `asyncjob adapter explain FILE`: a provider contract loaded exactly as
 * the worker loads it (`loadProviderContract`: by path, or by name in ASYNCJOB_PROVIDERS_PATH and the built-in
 * presets; `preset:` merged, `${VAR}` substituted in `baseUrl`, inline secrets refused, the document's `name:`
 * agreeing with its file name), then reported: every problem with its field path, or what the adapter will send
 * and read. A `${VAR}` that is not set where this runs is a warning (the document is checked with a stand-in
 * URL), unless `--require-env`; `--base-url URL` replaces the document's base URL as the worker's own option does.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  BUILT_IN_PRESETS,
  ProviderContractError,
  expandPreset,
  loadProviderContract,
  type ContractIssue,
  type ProviderContract,
} from '../adapters/providers';
import { describeContract, renderExplanation } from '../adapters/providers/explain';
import { fileNameOf } from '../adapters/providers/registry';
import { type CliCommand } from './args';
import { type CommandContext } from './commands';
import { type ProviderAdapterCode } from '../adapters/providers/errors';
import { EXIT, type ExitCode, exitStatusOf } from './exit-codes';

type Cmd = Extract<CliCommand, { command: 'adapter' }>;
type Env = Readonly<Record<string, string | undefined>>;

/** The stand-in for an unset `${VAR}` that starts the base URL (elsewhere in it: `unset`). */
const UNSET_BASE_URL = 'https://unset.invalid';

/** One contract as `validate` reports it (`contracts[]` of `asyncjob.adapter-validate/v1`). */
interface CheckedContract {
  file: string;
  valid: boolean;
  /** `ASYNCJOB_ERR_ADAPTER_INVALID`, `ASYNCJOB_ERR_ADAPTER_NOT_FOUND`, or null when valid. */
  code: ProviderAdapterCode | null;
  name: string | null;
  preset: string | null;
  create: { method: string; path: string } | null;
  /** The base URL the document was checked with (a stand-in when a variable is not set). */
  baseUrl: string | null;
  issues: ContractIssue[];
  warnings: ContractIssue[];
}

interface Checked extends CheckedContract {
  contract?: ProviderContract;
  /** The base URL as shown to people: unset variables kept as `${VAR}`. */
  baseUrlLabel?: string;
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** As the loader decides: a path contains a slash or ends in .json/.yaml/.yml; anything else is a name. */
function looksLikePath(reference: string): boolean {
  return reference.includes('/') || reference.includes('\\') || /\.(json|ya?ml)$/i.test(reference);
}

async function parsedFile(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  return /\.json$/i.test(file) ? (JSON.parse(text) as unknown) : (parseYaml(text, { maxAliasCount: 100 }) as unknown);
}

/** The raw document the loader will read (for its `preset:` and `baseUrl`), or undefined; the loader reports why. */
async function rawDocument(reference: string, searchDirs: readonly string[]): Promise<unknown> {
  const candidates = looksLikePath(reference)
    ? [path.resolve(reference)]
    : searchDirs.flatMap((dir) => ['.json', '.yaml', '.yml'].map((ext) => path.resolve(dir, reference + ext)));
  for (const file of candidates) {
    try {
      return await parsedFile(file);
    } catch {
      // absent or unreadable: the next candidate, and the loader names the problem
    }
  }
  return looksLikePath(reference) ? undefined : BUILT_IN_PRESETS[reference];
}

interface BaseUrlPlan {
  baseUrl?: string;
  label?: string;
  warnings: ContractIssue[];
}

/** Stand-ins for the unset `${VAR}` of the merged document's base URL (unless `--require-env` or `--base-url`). */
function planBaseUrl(raw: unknown, env: Env, cmd: Cmd): BaseUrlPlan {
  if (cmd.baseUrl !== undefined) return { baseUrl: cmd.baseUrl, warnings: [] };
  if (cmd.requireEnv || !isObject(raw)) return { warnings: [] };
  const template = expandPreset(raw, []).baseUrl;
  if (typeof template !== 'string') return { warnings: [] };
  const unset = (name: string): boolean => env[name] === undefined || env[name] === '';
  const missing = [...new Set([...template.matchAll(VARIABLE)].map((m) => m[1]!).filter(unset))];
  if (missing.length === 0) return { warnings: [] };
  const baseUrl = template.replace(VARIABLE, (_m, name: string, offset: number) =>
    !unset(name) ? env[name]! : offset === 0 ? UNSET_BASE_URL : 'unset',
  );
  const label = template.replace(VARIABLE, (m, name: string) => (unset(name) ? m : env[name]!));
  const warnings = missing.map((name) => ({
    path: 'baseUrl',
    message: `environment variable ${name} is not set here: checked with a stand-in (the worker needs it; --base-url URL gives one, --require-env makes this an error)`,
  }));
  return { baseUrl, label, warnings };
}

/** Loads one contract as the worker does and reports it. Never throws for a bad document. */
async function checkContract(reference: string, cmd: Cmd, env: Env): Promise<Checked> {
  const searchDirs = (env.ASYNCJOB_PROVIDERS_PATH ?? '').split(path.delimiter).filter(Boolean);
  const raw = await rawDocument(reference, searchDirs);
  const preset = isObject(raw) && typeof raw.preset === 'string' ? raw.preset : null;
  const plan = planBaseUrl(raw, env, cmd);
  const out: Checked = {
    file: reference,
    valid: false,
    code: null,
    name: null,
    preset,
    create: null,
    baseUrl: null,
    issues: [],
    warnings: plan.warnings,
  };
  let contract: ProviderContract;
  try {
    contract = await loadProviderContract(reference, {
      searchDirs,
      env,
      ...(plan.baseUrl !== undefined ? { baseUrl: plan.baseUrl } : {}),
    });
  } catch (error) {
    if (!(error instanceof ProviderContractError)) {
      out.code = 'ASYNCJOB_ERR_ADAPTER_INVALID';
      out.issues = [{ path: '', message: `cannot read: ${error instanceof Error ? error.message : String(error)}` }];
      return out;
    }
    out.code = error.code;
    out.issues = [...error.issues];
    if (isObject(raw) && typeof raw.name === 'string') out.name = raw.name;
    return out;
  }
  const servedAs = fileNameOf(reference);
  out.name = contract.name;
  out.create = { method: contract.create.method, path: contract.create.path };
  out.baseUrl = contract.baseUrl;
  if (contract.name !== servedAs) {
    // The worker serves a contract under its name: and refuses a file whose name says otherwise.
    out.code = 'ASYNCJOB_ERR_ADAPTER_INVALID';
    out.issues = [
      {
        path: 'name',
        message: `the document is named "${contract.name}" but found as "${servedAs}": rename the file or the name: so they agree (a provider is served under its name:)`,
      },
    ];
    return out;
  }
  return { ...out, valid: true, contract, ...(plan.label !== undefined ? { baseUrlLabel: plan.label } : {}) };
}

function publicView(checked: Checked): CheckedContract {
  const { file, valid, code, name, preset, create, baseUrl, issues, warnings } = checked;
  return { file, valid, code, name, preset, create, baseUrl, issues, warnings };
}

function issueLines(checked: Checked): string[] {
  return [
    ...checked.issues.map((i) => `  ${i.path === '' ? '(document)' : i.path}: ${i.message}`),
    ...checked.warnings.map((w) => `  warning: ${w.path}: ${w.message}`),
  ];
}

/** The text report of one contract: `FILE: ok (name, preset, create METHOD path)` or every problem. */
function validateText(checked: Checked): string[] {
  if (checked.valid) {
    const create = checked.create!;
    return [
      `${checked.file}: ok (${checked.name}, ${checked.preset !== null ? `preset ${checked.preset}` : 'no preset'}, create ${create.method} ${create.path})`,
      ...issueLines(checked),
    ];
  }
  const what =
    checked.code === 'ASYNCJOB_ERR_ADAPTER_NOT_FOUND'
      ? 'not found'
      : `invalid (${checked.issues.length} problem${checked.issues.length === 1 ? '' : 's'})`;
  return [`${checked.file}: ${what}`, ...issueLines(checked)];
}

function write(ctx: CommandContext, lines: string[], to: 'stdout' | 'stderr' = 'stdout'): void {
  if (lines.length > 0) ctx.deps[to](`${lines.join('\n')}\n`);
}

async function validate(ctx: CommandContext, cmd: Cmd, env: Env): Promise<ExitCode> {
  const checked: Checked[] = [];
  for (const file of cmd.files) checked.push(await checkContract(file, cmd, env));
  const valid = checked.every((c) => c.valid);
  if (cmd.json)
    ctx.deps.stdout(
      `${JSON.stringify({ schema: 'asyncjob.adapter-validate/v1', valid, contracts: checked.map(publicView) })}\n`,
    );
  else {
    write(ctx, checked.flatMap(validateText));
    if (checked.length > 1)
      write(ctx, [`${checked.filter((c) => c.valid).length} of ${checked.length} contracts valid`]);
  }
  return exitOf(checked);
}

/** 0 when every contract is valid, else the exit status of the first invalid one's code (2, the registry says). */
function exitOf(checked: readonly Checked[]): ExitCode {
  const invalid = checked.find((c) => !c.valid);
  return invalid === undefined ? EXIT.ok : exitStatusOf(invalid.code ?? 'ASYNCJOB_ERR_ADAPTER_INVALID');
}

async function explain(ctx: CommandContext, cmd: Cmd, env: Env): Promise<ExitCode> {
  const checked = await checkContract(cmd.files[0]!, cmd, env);
  const explanation =
    checked.contract === undefined
      ? null
      : describeContract(checked.contract, {
          ...(checked.preset !== null ? { preset: checked.preset } : {}),
          ...(checked.baseUrlLabel !== undefined ? { baseUrlLabel: checked.baseUrlLabel } : {}),
        });
  if (cmd.json) {
    ctx.deps.stdout(
      `${JSON.stringify({
        schema: 'asyncjob.adapter-explain/v1',
        ...publicView(checked),
        description: explanation?.description ?? null,
        sections: explanation?.sections ?? null,
      })}\n`,
    );
  } else if (explanation === null) {
    write(ctx, validateText(checked), 'stderr');
  } else {
    write(ctx, renderExplanation(explanation));
    write(
      ctx,
      checked.warnings.map((w) => `warning: ${w.path}: ${w.message}`),
      'stderr',
    );
  }
  return exitOf([checked]);
}

/** `asyncjob adapter validate|explain`: exit 0 when every contract is valid, 2 otherwise. No Temporal needed. */
export async function adapterCommand(ctx: CommandContext, cmd: Cmd): Promise<ExitCode> {
  const env = ctx.deps.env ?? process.env;
  return cmd.action === 'validate' ? validate(ctx, cmd, env) : explain(ctx, cmd, env);
}
