/**
 * `asyncjob doctor [--json]`: checks the whole setup the environment describes, as a worker would run it, and
 * says what is wrong and how to fix it, one line per check. Changes nothing (the store is read, not migrated).
 * Exit codes: 0 every check passed (warnings allowed), 1 a setup problem, 2 a bad environment or a bad command
 * line, 5 Temporal cannot be reached (see {@link DOCTOR_EXIT}).
 */
import { openArtifactStore } from '../adapters/artifacts/open-artifact-store';
import { checkArtifacts, checkPort, checkStore, checkTemporal } from './checks';
import { checkEnvironment, parseHostPort } from './environment';
import { DOCTOR_EXIT, exitCodeOf, type Finding } from './findings';
import { checkNexusEndpoint } from './nexus-check';
import { checkObjectStore } from './object-store-check';

/** Where the command writes and what environment it reads. */
export interface DoctorIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long to wait for Temporal to answer. Default 5000 ms. */
  readonly timeoutMs?: number;
}

/** The usage text. */
export const DOCTOR_USAGE = `usage: asyncjob doctor [--json]
  Checks the setup the environment describes, as a worker would run it, and prints one line per check: ok, or
  the problem and how to fix it. It changes nothing (the store is read, not migrated). Checked: the configuration
  variables and the files they name; Temporal (reachable, the namespace, asyncjob's search attributes); the store
  (opens, migrations current); every provider in ASYNCJOB_PROVIDERS (its contract loads, its base URL variables
  and credential are set, its webhook secret when the receiver runs); the artifact directory (writable); the
  webhook and metrics ports (free); with ASYNCJOB_NEXUS_ENDPOINT, that the Nexus endpoint exists and targets the
  worker's namespace and task queue. Every setting: docs/configuration.md.
exit codes: 0 all ok (warnings allowed), 1 a setup problem (namespace, search attributes, Nexus endpoint, store,
            port, artifact directory), 2 a bad environment (an invalid setting, a missing variable or file) or command line,
            5 Temporal cannot be reached
`;

/** The JSON document of `asyncjob doctor --json`. */
export interface DoctorReport {
  schema: 'asyncjob.doctor/v1';
  ok: boolean;
  exitCode: number;
  checks: {
    check: string;
    subject: string | null;
    status: Finding['status'];
    message: string;
    fix: string | null;
    kind: Finding['kind'] | null;
  }[];
}

const processIo: DoctorIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

/** Runs every check; never throws for a problem of the setup (each is a finding). */
async function runDoctor(
  env: Readonly<Record<string, string | undefined>>,
  options: { timeoutMs?: number } = {},
): Promise<Finding[]> {
  const { config, findings } = await checkEnvironment(env, { scope: 'all' });
  if (config === undefined) {
    for (const check of ['temporal', 'store', 'artifacts', 'webhook-port', 'metrics-port'])
      findings.push({ check, status: 'skipped', message: 'the configuration is invalid' });
    return findings;
  }
  findings.push(...(await checkTemporal(config, options.timeoutMs ?? 5_000)));
  // Only a worker that serves Nexus has an endpoint to check.
  if (config.ASYNCJOB_NEXUS_ENDPOINT !== undefined)
    findings.push(await checkNexusEndpoint(config, config.ASYNCJOB_NEXUS_ENDPOINT, options.timeoutMs ?? 5_000));
  findings.push(await checkStore(config.ASYNCJOB_STORE));
  findings.push(
    config.ASYNCJOB_ARTIFACTS === undefined
      ? await checkArtifacts(config.ASYNCJOB_ARTIFACTS_DIR)
      : await checkObjectStore(config.ASYNCJOB_ARTIFACTS, openArtifactStore(config, env), options.timeoutMs ?? 5_000),
  );
  findings.push(
    config.ASYNCJOB_WEBHOOK_PORT !== undefined
      ? await checkPort(
          'webhook-port',
          'ASYNCJOB_WEBHOOK_PORT',
          config.ASYNCJOB_WEBHOOK_HOST,
          config.ASYNCJOB_WEBHOOK_PORT,
          'webhook receiver',
        )
      : { check: 'webhook-port', status: 'ok', message: 'no webhook receiver (ASYNCJOB_WEBHOOK_PORT is not set)' },
  );
  const metrics = config.ASYNCJOB_METRICS_ADDRESS ? parseHostPort(config.ASYNCJOB_METRICS_ADDRESS) : undefined;
  findings.push(
    metrics !== undefined
      ? await checkPort('metrics-port', 'ASYNCJOB_METRICS_ADDRESS', metrics.host, metrics.port, 'Prometheus metrics')
      : config.ASYNCJOB_METRICS_ADDRESS
        ? { check: 'metrics-port', status: 'skipped', message: 'ASYNCJOB_METRICS_ADDRESS does not parse' }
        : { check: 'metrics-port', status: 'ok', message: 'no metrics endpoint (ASYNCJOB_METRICS_ADDRESS is not set)' },
  );
  return findings;
}

/** One line per finding: `ok       temporal: ...` or `PROBLEM  provider reports: ... (fix: ...)`. */
function formatFindings(findings: readonly Finding[]): string {
  const label = { ok: 'ok', warn: 'warn', problem: 'PROBLEM', skipped: 'skipped' } as const;
  const lines = findings.map((f) => {
    const check = f.check === 'provider' && f.subject !== undefined ? `provider ${f.subject}` : f.check;
    return `${label[f.status].padEnd(9)}${check}: ${f.message}${f.fix !== undefined ? ` (fix: ${f.fix})` : ''}`;
  });
  const problems = findings.filter((f) => f.status === 'problem').length;
  const warnings = findings.filter((f) => f.status === 'warn').length;
  const code = exitCodeOf(findings);
  const why =
    {
      [DOCTOR_EXIT.ok]: '',
      [DOCTOR_EXIT.problem]: ' (a setup problem)',
      [DOCTOR_EXIT.environment]: ' (a bad environment)',
      [DOCTOR_EXIT.connection]: ' (Temporal cannot be reached)',
    }[code] ?? '';
  const summary =
    problems === 0
      ? `all checks passed${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`
      : `${problems} problem${problems === 1 ? '' : 's'}${warnings > 0 ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}: exit ${code}${why}`;
  return `${lines.join('\n')}\n${summary}\n`;
}

/** The `--json` document. */
function doctorReport(findings: readonly Finding[]): DoctorReport {
  const exitCode = exitCodeOf(findings);
  return {
    schema: 'asyncjob.doctor/v1',
    ok: exitCode === DOCTOR_EXIT.ok,
    exitCode,
    checks: findings.map((f) => ({
      check: f.check,
      subject: f.subject ?? null,
      status: f.status,
      message: f.message,
      fix: f.fix ?? null,
      kind: f.kind ?? null,
    })),
  };
}

/**
 * Runs `asyncjob doctor ...` with `argv` being the arguments after `doctor`. Resolves with the exit code; never
 * throws (an unexpected failure of its own is reported and exits 6, as everywhere).
 */
export async function runDoctorCli(argv: string[], io: DoctorIo = processIo): Promise<number> {
  const json = argv.includes('--json');
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h' || arg === 'help') {
      io.stdout(DOCTOR_USAGE);
      return DOCTOR_EXIT.ok;
    }
    if (arg !== '--json') {
      io.stderr(
        `asyncjob doctor: ${arg.startsWith('-') ? `unknown option ${arg}` : `unexpected argument "${arg}"`}\n${DOCTOR_USAGE}`,
      );
      if (json)
        io.stdout(
          `${JSON.stringify({ schema: 'asyncjob.error/v1', code: 'ASYNCJOB_ERR_USAGE', message: `unknown argument ${arg}`, exitCode: DOCTOR_EXIT.environment })}\n`,
        );
      return DOCTOR_EXIT.environment;
    }
  }
  let findings: Finding[];
  try {
    findings = await runDoctor(io.env, io.timeoutMs !== undefined ? { timeoutMs: io.timeoutMs } : {});
  } catch (err) {
    io.stderr(`asyncjob doctor: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 6;
  }
  if (json) io.stdout(`${JSON.stringify(doctorReport(findings))}\n`);
  else io.stdout(formatFindings(findings));
  return exitCodeOf(findings);
}
