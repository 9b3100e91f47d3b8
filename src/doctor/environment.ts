/**
 * The environment check shared by the worker's start and `asyncjob doctor`: the configuration variables, the
 * files they name (TLS, the audit HMAC key), and every provider the worker is asked to serve: its contract
 * loads, its name agrees with its file, the variables in its base URL are set, its credential reference resolves
 * (variable set and non-empty, or file readable and non-empty) and, when the webhook receiver runs, so does its
 * webhook secret. Every problem is found, not the first only; secret values are never read into a message.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type ProviderContract } from '../adapters/providers/contract';
import { loadProviderContract } from '../adapters/providers/load';
import { ProviderContractError } from '../adapters/providers/errors';
import { fileNameOf } from '../adapters/providers/registry';
import { ConfigError, loadConfig, type Config } from '../config';
import { ok, problem, type Finding } from './findings';

type Env = Readonly<Record<string, string | undefined>>;

/** A secret named by reference, as contracts write it. */
interface SecretReference {
  secretEnv?: string | undefined;
  secretFile?: string | undefined;
}

/** What the environment check found. */
export interface EnvironmentReport {
  /** The validated configuration, or undefined when it is invalid (its problems are among the findings). */
  readonly config: Config | undefined;
  readonly findings: Finding[];
}

/** Options of {@link checkEnvironment}. */
export interface EnvironmentCheckOptions {
  /**
   * `worker`: what a worker reads (the audit HMAC key only); `all` (doctor): also the audit signing and verify
   * key files the audit commands read. Default `worker`.
   */
  readonly scope?: 'worker' | 'all';
}

/** The base URL a contract is checked with while one of its variables is missing (so the rest can be checked). */
const STAND_IN_BASE_URL = 'https://unset.invalid';

const UNSET_VARIABLE = /^environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set$/;

/** Why a secret reference does not resolve, or undefined when it does. Never reads the value into the text. */
async function secretProblem(ref: SecretReference, env: Env): Promise<{ what: string; fix: string } | undefined> {
  if (ref.secretEnv !== undefined) {
    const name = ref.secretEnv;
    const value = env[name];
    if (value === undefined || value === '')
      return {
        what: `${name} is not set`,
        fix: `set ${name} in the worker's environment, or name a file with secretFile instead`,
      };
    if (value.trim() === '') return { what: `${name} is empty`, fix: `set ${name} to the secret` };
    if (/[\r\n]/.test(value))
      return { what: `${name} contains a line break`, fix: `set ${name} to the secret alone, on one line` };
    return undefined;
  }
  if (ref.secretFile !== undefined) {
    const file = ref.secretFile;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      return {
        what: `the file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        fix: `create ${file} holding the secret, readable by the worker's user`,
      };
    }
    if (text.trim() === '') return { what: `the file ${file} is empty`, fix: `write the secret into ${file}` };
    return undefined;
  }
  return { what: 'no secretEnv nor secretFile', fix: 'name the secret with secretEnv or secretFile' };
}

function describeSecret(ref: SecretReference): string {
  return ref.secretEnv !== undefined ? `from ${ref.secretEnv}` : `from the file ${ref.secretFile ?? '?'}`;
}

/** The configuration variables: one finding, or one problem per invalid variable. */
function checkConfiguration(env: Env, findings: Finding[]): Config | undefined {
  try {
    const config = loadConfig(env as NodeJS.ProcessEnv);
    findings.push(
      ok(
        'configuration',
        `valid: Temporal ${config.TEMPORAL_ADDRESS}, namespace ${config.TEMPORAL_NAMESPACE}, task queue ${config.ASYNCJOB_TASK_QUEUE}, store ${config.ASYNCJOB_STORE.replace(/\/\/[^@/]*@/, '//***@')}`,
      ),
    );
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const text of err.problems) {
      const variable = /^([A-Z][A-Z0-9_]*):/.exec(text)?.[1];
      findings.push(
        problem(
          'configuration',
          'environment',
          text,
          variable !== undefined
            ? `set ${variable} to a valid value (docs/configuration.md)`
            : 'see docs/configuration.md',
        ),
      );
    }
    return undefined;
  }
}

/** Files named by variables: readable (and, for keys, not empty). */
async function checkFiles(env: Env, scope: 'worker' | 'all', findings: Finding[]): Promise<void> {
  const files: { variable: string; what: string; pair?: string }[] = [
    { variable: 'TEMPORAL_TLS_CA', what: 'the CA certificate' },
    { variable: 'TEMPORAL_TLS_CERT', what: 'the client certificate' },
    { variable: 'TEMPORAL_TLS_KEY', what: 'the client key' },
    // Setting both HMAC forms is a configuration problem already (src/config.ts).
    { variable: 'ASYNCJOB_AUDIT_HMAC_KEY_FILE', what: 'the audit HMAC key' },
    ...(scope === 'all'
      ? [
          {
            variable: 'ASYNCJOB_AUDIT_SIGNING_KEY_FILE',
            what: 'the audit checkpoint signing key',
            pair: 'ASYNCJOB_AUDIT_SIGNING_KEY',
          },
          {
            variable: 'ASYNCJOB_AUDIT_VERIFY_KEY_FILE',
            what: 'the audit checkpoint verify key',
            pair: 'ASYNCJOB_AUDIT_VERIFY_KEY',
          },
        ]
      : []),
  ];
  for (const { variable, what, pair } of files) {
    const file = env[variable];
    if (pair !== undefined && file && env[pair]) {
      findings.push(
        problem(
          'files',
          'environment',
          `${variable} and ${pair} are both set`,
          `set one of them (the file form keeps ${what} out of the environment)`,
        ),
      );
      continue;
    }
    if (!file) continue;
    try {
      const text = await readFile(file, 'utf8');
      if (text.trim() === '')
        findings.push(
          problem('files', 'environment', `${variable}: the file ${file} is empty`, `write ${what} into ${file}`),
        );
      else findings.push(ok('files', `${variable}: ${file} is readable`));
    } catch (err) {
      findings.push(
        problem(
          'files',
          'environment',
          `${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
          `point ${variable} at a readable file holding ${what}`,
        ),
      );
    }
  }
}

/** Loads one contract as the worker does; a missing `${VAR}` in its base URL is reported and the rest still checked. */
async function loadForCheck(
  reference: string,
  searchDirs: readonly string[],
  env: Env,
  findings: Finding[],
): Promise<ProviderContract | undefined> {
  try {
    return await loadProviderContract(reference, { searchDirs, env });
  } catch (err) {
    if (!(err instanceof ProviderContractError)) throw err;
    const subject = fileNameOf(reference);
    if (err.code === 'ASYNCJOB_ERR_ADAPTER_NOT_FOUND') {
      findings.push(
        problem(
          'provider',
          'environment',
          `provider contract ${reference} not found: ${err.issues.map((i) => i.message).join('; ')}`,
          'fix ASYNCJOB_PROVIDERS: a contract file path, or a name found in ASYNCJOB_PROVIDERS_PATH or among the presets',
          subject,
        ),
      );
      return undefined;
    }
    const unset = err.issues
      .flatMap((issue) => (issue.path === 'baseUrl' ? [UNSET_VARIABLE.exec(issue.message)?.[1]] : []))
      .filter((v): v is string => v !== undefined);
    const others = err.issues.filter((issue) => !(issue.path === 'baseUrl' && UNSET_VARIABLE.test(issue.message)));
    // Only variables are missing: the rest of the contract is checked with a stand-in base URL.
    const contract =
      others.length > 0
        ? undefined
        : await loadProviderContract(reference, { searchDirs, env, baseUrl: STAND_IN_BASE_URL }).catch(() => undefined);
    for (const variable of unset) {
      findings.push(
        problem(
          'provider',
          'environment',
          `${variable} is not set: provider contract ${reference} takes its baseUrl from it`,
          `set ${variable} to the provider's base URL in the worker's environment`,
          contract?.name ?? subject,
        ),
      );
    }
    for (const issue of others) {
      findings.push(
        problem(
          'provider',
          'environment',
          `provider contract ${reference}: ${issue.path === '' ? '(document)' : issue.path}: ${issue.message}`,
          `fix the contract (asyncjob adapter validate ${reference} lists every problem)`,
          subject,
        ),
      );
    }
    return contract;
  }
}

/** Every provider of ASYNCJOB_PROVIDERS: contract, name, base URL variables, credential, webhook secret. */
async function checkProviders(env: Env, receiver: boolean, findings: Finding[]): Promise<void> {
  const references = (env.ASYNCJOB_PROVIDERS ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (references.length === 0) {
    findings.push(
      problem(
        'provider',
        'environment',
        'ASYNCJOB_PROVIDERS names no provider',
        'set ASYNCJOB_PROVIDERS to the contracts to serve, e.g. ASYNCJOB_PROVIDERS=./providers/reports.yaml (a file, or a name in ASYNCJOB_PROVIDERS_PATH or a preset)',
      ),
    );
    return;
  }
  const searchDirs = (env.ASYNCJOB_PROVIDERS_PATH ?? '').split(path.delimiter).filter(Boolean);
  const servedBy = new Map<string, string>();
  for (const reference of references) {
    const before = findings.length;
    const contract = await loadForCheck(reference, searchDirs, env, findings);
    if (contract === undefined) continue;
    const subject = contract.name;
    const foundAs = fileNameOf(reference);
    if (contract.name !== foundAs) {
      findings.push(
        problem(
          'provider',
          'environment',
          `provider contract ${reference} is named "${contract.name}" but found as "${foundAs}"`,
          'rename the file or the name: so they agree (a provider is served under its name:)',
          subject,
        ),
      );
    }
    const earlier = servedBy.get(contract.name);
    if (earlier !== undefined) {
      findings.push(
        problem(
          'provider',
          'environment',
          `provider ${contract.name} is listed twice in ASYNCJOB_PROVIDERS (${earlier}, ${reference})`,
          'list each provider once',
          subject,
        ),
      );
    }
    servedBy.set(contract.name, reference);
    const credential = contract.credential;
    let credentialText = 'no credential';
    if (credential.scheme !== 'none') {
      const missing = await secretProblem(credential, env);
      if (missing !== undefined) {
        findings.push(
          problem(
            'provider',
            'environment',
            `${missing.what}: provider ${contract.name} (${reference}) reads its credential from it`,
            missing.fix,
            subject,
          ),
        );
      }
      credentialText = `credential ${describeSecret(credential)}`;
    }
    let webhookText = '';
    if (contract.webhook !== undefined) {
      if (receiver) {
        const missing = await secretProblem(contract.webhook.secret, env);
        if (missing !== undefined) {
          findings.push(
            problem(
              'provider',
              'environment',
              `${missing.what}: provider ${contract.name} (${reference}) checks its webhooks' signatures with it (the receiver runs: ASYNCJOB_WEBHOOK_PORT is set)`,
              `${missing.fix}, or run without the receiver (unset ASYNCJOB_WEBHOOK_PORT)`,
              subject,
            ),
          );
        }
        webhookText = `, webhook secret ${describeSecret(contract.webhook.secret)}`;
      } else webhookText = ', webhooks not received here (ASYNCJOB_WEBHOOK_PORT is not set)';
    }
    if (findings.length === before)
      findings.push(ok('provider', `${reference}: ${contract.baseUrl}, ${credentialText}${webhookText}`, subject));
  }
}

/** `host:port` (as ASYNCJOB_METRICS_ADDRESS is written), or undefined when it does not parse. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(address.trim());
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

/**
 * Checks the environment as a worker reads it. Never throws for a problem (each is a finding); throws only for
 * an unexpected failure of its own.
 */
export async function checkEnvironment(env: Env, options: EnvironmentCheckOptions = {}): Promise<EnvironmentReport> {
  const findings: Finding[] = [];
  const config = checkConfiguration(env, findings);
  if (config?.ASYNCJOB_METRICS_ADDRESS && parseHostPort(config.ASYNCJOB_METRICS_ADDRESS) === undefined) {
    findings.push(
      problem(
        'configuration',
        'environment',
        `ASYNCJOB_METRICS_ADDRESS: "${config.ASYNCJOB_METRICS_ADDRESS}" is not host:port`,
        'set ASYNCJOB_METRICS_ADDRESS to host:port, e.g. 0.0.0.0:9464',
      ),
    );
  }
  await checkFiles(env, options.scope ?? 'worker', findings);
  const receiver =
    config !== undefined ? config.ASYNCJOB_WEBHOOK_PORT !== undefined : (env.ASYNCJOB_WEBHOOK_PORT ?? '') !== '';
  await checkProviders(env, receiver, findings);
  return { config, findings };
}

/**
 * The worker's start-up check: the configuration and everything it names, all problems at once. Resolves with
 * the configuration, or throws {@link ConfigError} (`ASYNCJOB_ERR_CONFIG_INVALID`, exit 2) naming every missing
 * variable and file.
 */
export async function checkWorkerEnvironment(env: Env): Promise<Config> {
  const { config, findings } = await checkEnvironment(env, { scope: 'worker' });
  const problems = findings.filter((f) => f.status === 'problem').map((f) => f.message);
  if (problems.length > 0 || config === undefined) throw new ConfigError(problems);
  return config;
}
