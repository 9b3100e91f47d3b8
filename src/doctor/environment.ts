/**
 * The environment check shared by the worker's start and `asyncjob doctor`: the configuration variables, the
 * files they name (TLS, the audit HMAC key), and every provider the worker is asked to serve: its contract
 * loads, its name agrees with its file, the variables in its base URL are set, its credential reference resolves
 * (variable set and non-empty, or file readable and non-empty) and, when the webhook receiver runs, so does its
 * webhook secret; and the decider policy (D2): valid when set, a warning when not. Every problem is found, not the
 * first only; secret values are never read into a message.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, loadConfig, type Config } from '../config';
import type { DeciderPolicyInForce } from '../core/decider-policy';
import { loadDeciderPolicy } from '../policy/decider-policy-file';
import { PolicyFileError } from '../policy/policy-file';
import { ok, problem, type Finding } from './findings';
import { checkProviders } from './provider-checks';

type Env = Readonly<Record<string, string | undefined>>;

/** What the environment check found. */
export interface EnvironmentReport {
  /** The validated configuration, or undefined when it is invalid (its problems are among the findings). */
  readonly config: Config | undefined;
  readonly findings: Finding[];
  /** The decider policy ASYNCJOB_DECIDER_POLICY names, loaded once; undefined when unset or invalid. */
  readonly deciders?: DeciderPolicyInForce;
}

/** What the worker's start-up check resolves with: the configuration and the decider policy it read. */
export interface WorkerEnvironment {
  readonly config: Config;
  /** The decider policy every operation the worker starts keeps (D2); undefined: there is none. */
  readonly deciders?: DeciderPolicyInForce;
}

/** Options of {@link checkEnvironment}. */
export interface EnvironmentCheckOptions {
  /**
   * `worker`: what a worker reads (the audit HMAC key only); `all` (doctor): also the audit signing and verify
   * key files the audit commands read. Default `worker`.
   */
  readonly scope?: 'worker' | 'all';
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

/**
 * What a worker without a decider policy lets happen (D2): the warning of `asyncjob doctor` and of the worker's
 * start. G2 and D1 hold without a policy: no agent grants, no requester approves their own request.
 */
export const NO_DECIDER_POLICY = {
  message:
    'no decider policy (ASYNCJOB_DECIDER_POLICY is not set): anyone who can signal or update the workflow may decide any escalation under any name (agents and requesters are still refused, G2/D1)',
  fix: 'set ASYNCJOB_DECIDER_POLICY to a policy file whose deciders section names who may decide (docs/operating.md#who-may-decide)',
} as const;

/**
 * A decider policy in a few words: its digest, its rules and the deciders it holds keys for. Pure. The digest
 * follows `digest:`, never `digest ` (the log's redaction takes the word and what follows for an HTTP Digest
 * credential).
 */
export function describeDeciderPolicy(deciders: DeciderPolicyInForce): string {
  const rules = deciders.policy.rules.length;
  const signers = deciders.policy.deciders.length;
  return `digest: ${deciders.digest}, ${rules} rule${rules === 1 ? '' : 's'}, ${signers} decider${signers === 1 ? '' : 's'} with keys`;
}

/** The decider policy file, read once: ok naming its digest, a problem naming every issue, or the warning. */
function checkDeciderPolicy(file: string | undefined, findings: Finding[]): DeciderPolicyInForce | undefined {
  if (file === undefined) {
    findings.push({ check: 'decider-policy', status: 'warn', ...NO_DECIDER_POLICY });
    return undefined;
  }
  try {
    const deciders = loadDeciderPolicy(file);
    findings.push(ok('decider-policy', `ASYNCJOB_DECIDER_POLICY: ${file}: ${describeDeciderPolicy(deciders)}`));
    return deciders;
  } catch (err) {
    if (!(err instanceof PolicyFileError)) throw err;
    findings.push(
      problem(
        'decider-policy',
        'environment',
        `ASYNCJOB_DECIDER_POLICY: ${err.message}`,
        `point ASYNCJOB_DECIDER_POLICY at a readable policy file and correct what is named (docs/operating.md#who-may-decide)`,
      ),
    );
    return undefined;
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
  // An invalid value is a configuration problem already; the file is checked as the variable is written.
  const policyFile =
    config !== undefined ? config.ASYNCJOB_DECIDER_POLICY : env.ASYNCJOB_DECIDER_POLICY?.trim() || undefined;
  const deciders = checkDeciderPolicy(policyFile, findings);
  return { config, findings, ...(deciders !== undefined ? { deciders } : {}) };
}

/**
 * The worker's start-up check: the configuration and everything it names, all problems at once. Resolves with
 * the configuration and the decider policy as read here (the worker does not read the file again), or throws
 * {@link ConfigError} (`ASYNCJOB_ERR_CONFIG_INVALID`, exit 2) naming every missing variable and file and every
 * issue of the decider policy.
 */
export async function checkWorkerEnvironment(env: Env): Promise<WorkerEnvironment> {
  const { config, findings, deciders } = await checkEnvironment(env, { scope: 'worker' });
  const problems = findings.filter((f) => f.status === 'problem').map((f) => f.message);
  if (problems.length > 0 || config === undefined) throw new ConfigError(problems);
  return { config, ...(deciders !== undefined ? { deciders } : {}) };
}
