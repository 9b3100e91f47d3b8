/**
 * The provider part of the environment check (`checkEnvironment`): every provider the worker is asked to serve,
 * its contract loads, its name agrees with its file, the variables in its base URL are set, its credential
 * reference resolves and, when the webhook receiver runs, so does its webhook secret. Secret values are never read
 * into a message.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type ProviderContract } from '../adapters/providers/contract';
import { ProviderContractError } from '../adapters/providers/errors';
import { loadProviderContract } from '../adapters/providers/load';
import { fileNameOf } from '../adapters/providers/registry';
import { ok, problem, type Finding } from './findings';

type Env = Readonly<Record<string, string | undefined>>;

/** A secret named by reference, as contracts write it. */
interface SecretReference {
  secretEnv?: string | undefined;
  secretFile?: string | undefined;
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

/** How a secret is named in a finding: its variable or its file, never its value. */
function describeSecret(ref: SecretReference): string {
  return ref.secretEnv !== undefined ? `from ${ref.secretEnv}` : `from the file ${ref.secretFile ?? '?'}`;
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

/**
 * Every provider of ASYNCJOB_PROVIDERS: contract, name, base URL variables, credential, webhook secret (webhook
 * secrets only when the receiver runs). Each problem is appended to `findings`, a provider without one gets an
 * `ok` finding.
 */
export async function checkProviders(env: Env, receiver: boolean, findings: Finding[]): Promise<void> {
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
    checkServedName(contract, reference, servedBy, findings);
    servedBy.set(contract.name, reference);
    const credentialText = await checkCredential(contract, reference, env, findings);
    const webhookText = await checkWebhookSecret(contract, reference, env, receiver, findings);
    if (findings.length === before)
      findings.push(
        ok('provider', `${reference}: ${contract.baseUrl}, ${credentialText}${webhookText}`, contract.name),
      );
  }
}

/** The contract's name agrees with its file name, and no provider is listed twice (`servedBy`: name to reference). */
function checkServedName(
  contract: ProviderContract,
  reference: string,
  servedBy: ReadonlyMap<string, string>,
  findings: Finding[],
): void {
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
}

/** The provider's credential reference resolves; resolves with how the credential is described when all is well. */
async function checkCredential(
  contract: ProviderContract,
  reference: string,
  env: Env,
  findings: Finding[],
): Promise<string> {
  const credential = contract.credential;
  if (credential.scheme === 'none') return 'no credential';
  // AWS credentials come from the standard chain (variables, profile files, instance roles): found only when signing.
  if (credential.scheme === 'aws-sigv4')
    return `AWS SigV4 (${credential.region}, ${credential.service}) with credentials from ${credential.profile === undefined ? 'the standard AWS chain' : `profile ${credential.profile}`}`;
  // Basic's user name and OAuth2's client ID may be read from the environment too (not secrets, but needed).
  const identityEnv =
    credential.scheme === 'basic'
      ? credential.usernameEnv
      : credential.scheme === 'oauth2-client-credentials'
        ? credential.clientIdEnv
        : undefined;
  const missing = [
    identityEnv === undefined || (env[identityEnv] ?? '').trim() !== ''
      ? undefined
      : { what: `${identityEnv} is not set`, fix: `set ${identityEnv} in the worker's environment` },
    await secretProblem(credential, env),
  ];
  for (const found of missing) {
    if (found === undefined) continue;
    findings.push(
      problem(
        'provider',
        'environment',
        `${found.what}: provider ${contract.name} (${reference}) reads its credential from it`,
        found.fix,
        contract.name,
      ),
    );
  }
  return `credential ${describeSecret(credential)}`;
}

/**
 * The provider's webhook secret resolves when the receiver runs (`receiver`); resolves with how webhooks are
 * described when all is well ('' for a provider without webhooks).
 */
async function checkWebhookSecret(
  contract: ProviderContract,
  reference: string,
  env: Env,
  receiver: boolean,
  findings: Finding[],
): Promise<string> {
  if (contract.webhook === undefined) return '';
  if (!receiver) return ', webhooks not received here (ASYNCJOB_WEBHOOK_PORT is not set)';
  const missing = await secretProblem(contract.webhook.secret, env);
  if (missing !== undefined) {
    findings.push(
      problem(
        'provider',
        'environment',
        `${missing.what}: provider ${contract.name} (${reference}) checks its webhooks' signatures with it (the receiver runs: ASYNCJOB_WEBHOOK_PORT is set)`,
        `${missing.fix}, or run without the receiver (unset ASYNCJOB_WEBHOOK_PORT)`,
        contract.name,
      ),
    );
  }
  return `, webhook secret ${describeSecret(contract.webhook.secret)}`;
}
