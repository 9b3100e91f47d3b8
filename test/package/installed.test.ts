/**
 * The package as a user gets it: built (`npm run build`), packed (`npm pack`), installed into a fresh project
 * (`npm install /path/to/asyncjob`, here the tarball), where `npx asyncjob help` and `npx asyncjob adapter validate`
 * run from the installed files, and README.md's TypeScript example compiles (`strict`, `skipLibCheck: false`) in a
 * CommonJS consumer and in an ES module one (`"type": "module"`, `module: nodenext`).
 *
 * The install reuses npm's cache (`--prefer-offline`) and skips install scripts: the one that matters, the native
 * build of better-sqlite3, is the compile `npm ci` does (.ci/run runs it), and neither command here opens a store.
 * A consumer resolves the newest versions its ranges allow, so some tarballs come from the registry; a registry
 * connection that stalls is given up after a minute and tried again (npm's own default waits 5 minutes a try,
 * and two stalls in a row once outlasted the install's 10 minutes).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { docCommand } from '../docs/doc-commands';
import { runShell } from '../docs/shell';
import { ROOT } from './entries';

const run = promisify(execFile);
/**
 * The most one npm command may take: the install takes about 40 s on an idle machine and several minutes beside the
 * rest of the suite on two busy cores.
 */
const NPM_MS = 600_000;

/** The ```ts blocks of README.md. */
function readmeTypeScript(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)\n```$/gm)].map((match) => match[1]!);
}

/** The devDependency versions this repository pins, so the consumer installs them from npm's cache. */
function pinned(name: string): string {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  return `${name}@${pkg.devDependencies[name]}`;
}

describe('the installed package', { timeout: 900_000 }, () => {
  let project: string;

  beforeAll(async () => {
    const built = await runShell(docCommand('README.md', 'npm run build').text, { timeoutMs: NPM_MS });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    const packs = await mkdtemp(path.join(tmpdir(), 'asyncjob-pack-'));
    const packed = await runShell(`npm pack --silent --pack-destination ${packs}`, { timeoutMs: NPM_MS });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = path.join(
      packs,
      readdirSync(packs).find((f) => f.endsWith('.tgz'))!,
    );

    project = await mkdtemp(path.join(tmpdir(), 'asyncjob-consumer-'));
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    // README.md: `npm install /path/to/asyncjob`, with the tarball npm pack wrote as the path.
    const install = docCommand('README.md', 'npm install /path/to/asyncjob').text.replace('/path/to/asyncjob', tarball);
    const installed = await runShell(
      `${install} ${pinned('typescript')} ${pinned('@types/node')} --prefer-offline --ignore-scripts --no-audit --no-fund --fetch-timeout=60000 --fetch-retries=5`,
      { cwd: project, timeoutMs: NPM_MS },
    );
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
  }, 3 * NPM_MS);

  it('npx asyncjob help runs the installed CLI from dist/', async () => {
    const help = await runShell(docCommand('docs/cli.md', 'npx asyncjob help').text, {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: asyncjob <command> \[options\]/);
  });

  it("docs/agents.md: an MCP host runs the installed asyncjob by its path, from a directory of the host's own", async () => {
    const agents = readFileSync(path.join(ROOT, 'docs/agents.md'), 'utf8');
    const config = [...agents.matchAll(/^```json\n([\s\S]*?)\n```$/gm)]
      .map((match) => JSON.parse(match[1]!) as { mcpServers: Record<string, { command?: string; args?: string[] }> })
      .map((parsed) => parsed.mcpServers.asyncjob!)
      .find((server) => server.command !== undefined)!;
    expect(config.command).toMatch(/^\/\S+\/node_modules\/\.bin\/asyncjob$/);
    expect(config.args?.slice(0, 2)).toEqual(['mcp', '--policy']);
    // The service's install is where the docs' example path has its node_modules; the host starts elsewhere.
    const command = config.command!.replace(/^.*(?=\/node_modules\/)/, project);
    const hostDirectory = await mkdtemp(path.join(tmpdir(), 'asyncjob-mcp-host-'));
    const help = await runShell(`${command} mcp --help`, { cwd: hostDirectory, timeoutMs: 60_000 });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: asyncjob mcp --policy FILE/);
    const absent = path.join(hostDirectory, 'agents.yaml');
    const started = await runShell(`${command} ${[...config.args!.slice(0, 2), absent].join(' ')}`, {
      cwd: hostDirectory,
      timeoutMs: 60_000,
    });
    expect(started.code, started.stdout + started.stderr).toBe(2);
    expect(started.stderr).toContain('agents.yaml');
  });

  it('npx asyncjob adapter validate checks a contract in the consumer project', async () => {
    await writeFile(
      path.join(project, 'reports.yaml'),
      'name: reports\npreset: rest\nbaseUrl: https://reports.example.com\n',
    );
    const validate = await runShell('npx asyncjob adapter validate reports.yaml', { cwd: project, timeoutMs: 60_000 });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toContain('reports.yaml: ok (reports, preset rest, create POST /v1/jobs)');
    const broken = await runShell('npx asyncjob adapter validate absent.yaml', { cwd: project, timeoutMs: 60_000 });
    expect(broken.code).toBe(2);
    expect(broken.stdout).toContain('absent.yaml: not found');
  });

  it.each([
    ['an ES module consumer ("type": "module", module nodenext)', 'module', 'nodenext'],
    ['a CommonJS consumer (module node16)', 'commonjs', 'node16'],
  ])('README.md: the TypeScript example compiles in %s, strict, skipLibCheck false', async (_title, type, module) => {
    const blocks = readmeTypeScript();
    expect(blocks.length).toBeGreaterThan(0);
    const dir = path.join(project, type);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type }));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          module,
          moduleResolution: module,
          target: 'ES2022',
          types: ['node'],
          noEmit: true,
        },
        include: ['*.ts'],
      }),
    );
    for (const [index, block] of blocks.entries()) {
      // CommonJS has no top-level await: there the example's statements run inside an async function.
      const imports = block.split('\n').filter((line) => line.startsWith('import '));
      const body = block.split('\n').filter((line) => !line.startsWith('import '));
      const code =
        type === 'module'
          ? block
          : [...imports, 'export async function main(): Promise<void> {', ...body, '}'].join('\n');
      await writeFile(path.join(dir, `example-${index}.ts`), code + '\n');
    }
    const tsc = path.join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    const compiled = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).catch(
      (err: { stdout?: string; code?: number }) => ({ stdout: err.stdout ?? String(err), code: err.code }),
    );
    expect(compiled.stdout).toBe('');
  });
});
