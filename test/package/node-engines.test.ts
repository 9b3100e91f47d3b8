/**
 * package.json `engines.node` is enforced at every door: `bin/asyncjob` (before tsx), the worker and the library
 * entries refuse a Node.js outside it with one line naming both versions (exit 2; the library throws
 * `UnsupportedNodeError`). The range is read from package.json, never restated here. The machine's own older
 * Node.js, when it has one (`/usr/bin/node`), runs the entries for real.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  requiredNodeRange,
  satisfies,
  UNSUPPORTED_NODE_EXIT_STATUS,
  unsupportedNodeMessage,
} from '../../bin/node-engines.cjs';
import { classifyError } from '../../src/cli/run-cli';
import { ERROR_CODES } from '../../src/core/codes';
import { assertSupportedNode, UnsupportedNodeError } from '../../src/node-version';
import { packageJson, ROOT } from './entries';

const run = promisify(execFile);
const RANGE = packageJson().engines.node;

/** The lowest version of each alternative of the range (`^22.12.0` gives 22.12.0). */
function lowestOfEach(range: string): [number, number, number][] {
  return range.split('||').map((alternative) => {
    const match = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative);
    expect(match, `"${alternative}" is a caret range (extend these cases for another form)`).not.toBeNull();
    return [Number(match![1]), Number(match![2]), Number(match![3])];
  });
}

/** The version of the machine's older Node.js at /usr/bin/node, when it has one outside the range. */
function olderNode(): string | undefined {
  if (!existsSync('/usr/bin/node')) return undefined;
  const version = execFileSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  return satisfies(version, RANGE) ? undefined : version;
}
const older = olderNode();

describe('the supported Node.js versions (package.json engines)', () => {
  it.each([
    ['22.12.0', '^22.12.0', true],
    ['22.99.1', '^22.12.0', true],
    ['22.11.9', '^22.12.0', false],
    ['23.0.0', '^22.12.0', false],
    ['v24.1.0', '^22.12.0 || ^24.0.0', true],
    ['0.2.5', '^0.2.3', true],
    ['0.3.0', '^0.2.3', false],
    ['1.2.9', '~1.2.3', true],
    ['1.3.0', '~1.2.3', false],
    ['20.0.0', '>=18 <21', true],
    ['21.0.0', '>=18 <21', false],
    ['18.0.0', '>18', false],
    ['18.0.0', '<=18', true],
    ['18.0.0', '18.0.0', true],
  ])('%s against %s: %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });

  it('a range it cannot read is refused, never taken as satisfied', () => {
    expect(() => satisfies('22.12.0', 'twenty-two')).toThrow(/is not a version range/);
    expect(() => satisfies('twenty-two', '^22.12.0')).toThrow(/is not a version/);
    expect(() => satisfies('22.12.0', '^22.12.0 ||')).toThrow(/empty alternative/);
  });

  it('reads the range from package.json: the running Node.js and the lowest of each alternative satisfy it', () => {
    expect(requiredNodeRange()).toBe(RANGE);
    expect(satisfies(process.versions.node, RANGE)).toBe(true);
    for (const [major, minor, patch] of lowestOfEach(RANGE)) {
      expect(satisfies(`${major}.${minor}.${patch}`, RANGE)).toBe(true);
      expect(satisfies(`${major}.${minor + 1}.0`, RANGE)).toBe(true);
      if (patch > 0) expect(satisfies(`${major}.${minor}.${patch - 1}`, RANGE)).toBe(false);
      if (minor > 0) expect(satisfies(`${major}.${minor - 1}.${patch}`, RANGE)).toBe(false);
    }
  });

  it('refuses every major the range does not name, from two below its lowest to one above its highest', () => {
    const majors = lowestOfEach(RANGE).map(([major]) => major);
    for (let major = Math.min(...majors) - 2; major <= Math.max(...majors) + 1; major++)
      expect(satisfies(`${major}.99.0`, RANGE), `${major}.99.0`).toBe(majors.includes(major));
  });

  it('the library throws UnsupportedNodeError with the one line, and the CLI exits 2 on it', () => {
    const message = `Node.js 20.0.0 is not supported: asyncjob requires Node.js ${RANGE} (package.json engines)`;
    expect(unsupportedNodeMessage('20.0.0')).toBe(message);
    expect(unsupportedNodeMessage(process.versions.node)).toBeNull();
    expect(() => assertSupportedNode(process.versions.node)).not.toThrow();
    let thrown: unknown;
    try {
      assertSupportedNode('20.0.0');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnsupportedNodeError);
    expect(thrown).toMatchObject({ code: 'ASYNCJOB_ERR_NODE_UNSUPPORTED', message });
    expect(classifyError(thrown)).toEqual({ exitCode: 2, code: 'ASYNCJOB_ERR_NODE_UNSUPPORTED', message });
    // bin/asyncjob runs before tsx and cannot read the registry: its status is held to the registry's here.
    expect(UNSUPPORTED_NODE_EXIT_STATUS).toBe(ERROR_CODES.ASYNCJOB_ERR_NODE_UNSUPPORTED.exit);
  });

  describe.skipIf(older === undefined)(`on this machine's Node.js ${older ?? '(none older)'} at /usr/bin/node`, () => {
    const line = `asyncjob: ${unsupportedNodeMessage(older ?? '')}\n`;

    it.each([[['--help']], [['worker']], [['mcp', '--help']]])(
      '/usr/bin/node bin/asyncjob %j exits 2 with one line naming both versions',
      async (argv) => {
        const refused = await run('/usr/bin/node', ['bin/asyncjob', ...argv], { cwd: ROOT }).then(
          () => expect.unreachable('bin/asyncjob ran on an unsupported Node.js'),
          (err: { code: number; stdout: string; stderr: string }) => err,
        );
        expect(refused.code).toBe(2);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toBe(line);
        expect(line).toContain(`Node.js ${older} is not supported`);
        expect(line).toContain(RANGE);
      },
    );

    it.each(['src/index.ts', 'src/client-api.ts', 'src/worker-api.ts'])(
      'loading the library entry %s throws UnsupportedNodeError with the same line',
      async (entry) => {
        const probe = `try { require('./${entry}'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })) }`;
        const { stdout } = await run('/usr/bin/node', ['--require', 'tsx/cjs', '-e', probe], { cwd: ROOT });
        expect(JSON.parse(stdout)).toEqual({
          name: 'UnsupportedNodeError',
          code: 'ASYNCJOB_ERR_NODE_UNSUPPORTED',
          message: line.slice('asyncjob: '.length, -1),
        });
      },
    );
  });
});
