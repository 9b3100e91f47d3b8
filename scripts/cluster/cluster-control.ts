/** The cluster as scripts/cluster.sh runs it, and the asyncjob commands an operator runs against it. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client as PgClient } from 'pg';

const ROOT = path.join(__dirname, '..', '..');

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ exitCode: number; stdout: string; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ exitCode: code ?? 1, stdout, output }));
  });
}

/** Runs `bash scripts/cluster.sh <command>`; throws unless it succeeds. */
export async function clusterCommand(command: 'restart-server' | 'restart-postgres' | 'stop'): Promise<void> {
  const { exitCode } = await run('bash', [path.join(ROOT, 'scripts', 'cluster.sh'), command]);
  if (exitCode !== 0) throw new Error(`scripts/cluster.sh ${command} exited ${exitCode}`);
}

/** Starts the cluster (building it the first time) and returns what `start` exported. */
export async function clusterUp(): Promise<{ address: string; storeUrl: string }> {
  const { exitCode, stdout } = await run('bash', [path.join(ROOT, 'scripts', 'cluster.sh'), 'start']);
  if (exitCode !== 0) throw new Error(`scripts/cluster.sh start exited ${exitCode}`);
  const exported = Object.fromEntries(
    [...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map(([, name, value]) => [name!, value!]),
  );
  if (!exported.TEMPORAL_ADDRESS || !exported.ASYNCJOB_CLUSTER_STORE)
    throw new Error(`scripts/cluster.sh start printed no addresses:\n${stdout}`);
  return { address: exported.TEMPORAL_ADDRESS, storeUrl: exported.ASYNCJOB_CLUSTER_STORE };
}

/** Creates database `name` beside the one `url` names (a fresh store for one run); returns its URL. */
export async function createStoreDatabase(url: string, name: string): Promise<string> {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const fresh = new URL(url);
  fresh.pathname = `/${name}`;
  return fresh.toString();
}

/** `asyncjob audit verify --with-temporal` as an operator runs it; its exit code and last lines. */
export async function auditVerify(env: Record<string, string>): Promise<{ exitCode: number; tail: string }> {
  const { exitCode, output } = await run(
    process.execPath,
    [path.join(ROOT, 'bin', 'asyncjob'), 'audit', 'verify', '--with-temporal'],
    { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  );
  return { exitCode, tail: output.trim().split('\n').slice(-3).join(' | ') };
}

/** `asyncjob bundle --out FILE`: the workflow bundle the workers run; returns FILE. */
export async function writeWorkflowBundle(file: string): Promise<string> {
  const { exitCode, output } = await run(process.execPath, [
    path.join(ROOT, 'bin', 'asyncjob'),
    'bundle',
    '--out',
    file,
  ]);
  if (exitCode !== 0) throw new Error(`asyncjob bundle exited ${exitCode}: ${output}`);
  return file;
}
