/**
 * The environment check the worker runs at start (and `asyncjob doctor` reports): every missing base URL
 * variable, credential variable or file and webhook secret is named, all at once, never a secret's value.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_PRESETS } from '../../src/adapters/providers/presets';
import { ConfigError } from '../../src/config';
import { checkEnvironment, checkWorkerEnvironment, parseHostPort } from '../../src/doctor/environment';
import { loadDeciderPolicy } from '../../src/policy/decider-policy-file';

let dir: string;
const SECRET_VALUE = 'tok-3b9f1c0d5e7a2f48';

async function contract(name: string, patch: Record<string, unknown>, fileName = name): Promise<string> {
  const file = path.join(dir, `${fileName}.json`);
  await writeFile(file, JSON.stringify({ ...(BUILT_IN_PRESETS.rest as Record<string, unknown>), name, ...patch }));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-env-'));
});

const problems = async (env: Record<string, string>) =>
  (await checkEnvironment(env)).findings.filter((f) => f.status === 'problem');

/** A decider policy file as an operator writes it: a group, a signing decider and two rules. */
const DECIDER_POLICY = [
  'version: 1',
  'deciders:',
  '  keys:',
  `    alice@example.com: [ed25519:${'ab'.repeat(32)}]`,
  '  groups:',
  '    oncall: [alice@example.com, bob@example.com]',
  '  rules:',
  '    - name: oncall-may-extend',
  '      who: [group:oncall]',
  '      options: [extend, keep_bounds, close]',
  '      largestExtension: 1h',
  '    - name: alice-may-cancel',
  '      who: [alice@example.com]',
  '      options: [cancel_at_provider]',
  '      signed: true',
  '',
].join('\n');

/** Writes a decider policy file into the test's directory. */
async function policyFile(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

describe('the worker environment check', () => {
  it('names a missing user name or client ID variable beside the missing secret (basic, OAuth2 client credentials)', async () => {
    const basic = await contract('basic-auth', {
      baseUrl: 'https://basic.example',
      credential: { scheme: 'basic', usernameEnv: 'BASIC_USER', secretEnv: 'BASIC_PASSWORD' },
      webhook: undefined,
    });
    const oauth = await contract('oauth-auth', {
      baseUrl: 'https://oauth.example',
      credential: {
        scheme: 'oauth2-client-credentials',
        tokenUrl: 'https://login.example/token',
        clientIdEnv: 'OAUTH_CLIENT_ID',
        secretEnv: 'OAUTH_CLIENT_SECRET',
      },
      webhook: undefined,
    });
    const text = (await problems({ ASYNCJOB_PROVIDERS: `${basic},${oauth}`, OAUTH_CLIENT_SECRET: SECRET_VALUE }))
      .map((f) => f.message)
      .join('\n');
    expect(text).toContain('BASIC_USER is not set');
    expect(text).toContain('BASIC_PASSWORD is not set');
    expect(text).toContain('OAUTH_CLIENT_ID is not set');
    expect(text).not.toContain('OAUTH_CLIENT_SECRET is not set');
    expect(text).not.toContain(SECRET_VALUE);
  });

  it('names every missing variable and file at once: base URL, credentials, webhook secret', async () => {
    const reports = await contract('reports', {
      baseUrl: '${REPORTS_URL}/api',
      credential: { scheme: 'bearer', secretEnv: 'REPORTS_TOKEN' },
    });
    const renders = await contract('renders', {
      baseUrl: 'https://renders.example',
      credential: { scheme: 'header', headerName: 'X-Api-Key', secretFile: path.join(dir, 'missing-token') },
      webhook: {
        signatureHeader: 'X-Signature',
        scheme: 'hmac-sha256-timestamped',
        secret: { secretEnv: 'RENDERS_WEBHOOK_SECRET' },
        toleranceMs: 300000,
      },
    });
    const env = { ASYNCJOB_PROVIDERS: `${reports}, ${renders}`, ASYNCJOB_WEBHOOK_PORT: '0' };
    const found = await problems(env);
    const text = found.map((f) => f.message).join('\n');
    expect(text).toContain('REPORTS_URL is not set');
    expect(text).toContain('REPORTS_TOKEN is not set');
    expect(text).toContain(`the file ${path.join(dir, 'missing-token')} cannot be read (ENOENT)`);
    expect(text).toContain('RENDERS_WEBHOOK_SECRET is not set');
    // The preset's own webhook secret too: reports inherits the rest preset's webhook section.
    expect(text).toContain('ASYNCJOB_SIMULATOR_WEBHOOK_SECRET is not set');
    expect(found.every((f) => f.kind === 'environment' && f.fix !== undefined)).toBe(true);
    expect(found.filter((f) => f.subject === 'renders')).toHaveLength(2);

    const error = await checkWorkerEnvironment(env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('ASYNCJOB_ERR_CONFIG_INVALID');
    expect((error as ConfigError).problems).toHaveLength(found.length);
    for (const variable of [
      'REPORTS_URL',
      'REPORTS_TOKEN',
      'RENDERS_WEBHOOK_SECRET',
      'ASYNCJOB_SIMULATOR_WEBHOOK_SECRET',
    ])
      expect((error as ConfigError).message).toContain(variable);
  });

  it('checks webhook secrets only when the receiver runs', async () => {
    const file = await contract('quiet', { baseUrl: 'https://quiet.example', credential: { scheme: 'none' } });
    expect(await problems({ ASYNCJOB_PROVIDERS: file })).toEqual([]);
    expect(
      (await problems({ ASYNCJOB_PROVIDERS: file, ASYNCJOB_WEBHOOK_PORT: '8088' })).map((f) => f.message).join(),
    ).toContain('ASYNCJOB_SIMULATOR_WEBHOOK_SECRET is not set');
  });

  it('passes a servable setup and says what it will use, never the secret', async () => {
    const tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, `${SECRET_VALUE}\n`);
    const a = await contract('alpha', {
      baseUrl: 'https://alpha.example',
      credential: { scheme: 'bearer', secretEnv: 'ALPHA_TOKEN' },
    });
    const b = await contract('beta', {
      baseUrl: 'https://beta.example',
      credential: { scheme: 'bearer', secretFile: tokenFile },
    });
    const env = {
      ASYNCJOB_PROVIDERS: `${a},${b}`,
      ALPHA_TOKEN: SECRET_VALUE,
      ASYNCJOB_WEBHOOK_PORT: '8088',
      ASYNCJOB_SIMULATOR_WEBHOOK_SECRET: SECRET_VALUE,
      ASYNCJOB_DECIDER_POLICY: await policyFile('servable-policy.yaml', DECIDER_POLICY),
    };
    const report = await checkEnvironment(env);
    expect(report.findings.filter((f) => f.status !== 'ok')).toEqual([]);
    const lines = report.findings.map((f) => f.message).join('\n');
    expect(lines).toContain('alpha');
    expect(lines).toContain('credential from ALPHA_TOKEN');
    expect(lines).toContain(`credential from the file ${tokenFile}`);
    expect(lines).not.toContain(SECRET_VALUE);
    expect((await checkWorkerEnvironment(env)).config.ASYNCJOB_PROVIDERS).toBe(env.ASYNCJOB_PROVIDERS);
  });

  it('refuses an empty or blank credential, and one with a line break', async () => {
    const file = await contract('gamma', {
      baseUrl: 'https://gamma.example',
      credential: { scheme: 'bearer', secretEnv: 'GAMMA_TOKEN' },
    });
    const emptyFile = path.join(dir, 'empty');
    await writeFile(emptyFile, '  \n');
    const fromFile = await contract('delta', {
      baseUrl: 'https://delta.example',
      credential: { scheme: 'bearer', secretFile: emptyFile },
    });
    expect((await problems({ ASYNCJOB_PROVIDERS: file, GAMMA_TOKEN: '' }))[0]!.message).toMatch(
      /^GAMMA_TOKEN is not set/,
    );
    expect((await problems({ ASYNCJOB_PROVIDERS: file, GAMMA_TOKEN: '   ' }))[0]!.message).toMatch(
      /^GAMMA_TOKEN is empty/,
    );
    expect((await problems({ ASYNCJOB_PROVIDERS: file, GAMMA_TOKEN: 'a\nb' }))[0]!.message).toMatch(
      /^GAMMA_TOKEN contains a line break/,
    );
    expect((await problems({ ASYNCJOB_PROVIDERS: fromFile }))[0]!.message).toContain(`the file ${emptyFile} is empty`);
  });

  it('names a contract that is not found, invalid, or whose name disagrees with its file', async () => {
    const mismatched = await contract(
      'epsilon',
      { baseUrl: 'https://e.example', credential: { scheme: 'none' } },
      'not-epsilon',
    );
    const invalid = await contract('zeta', {
      baseUrl: 'https://z.example',
      credential: { scheme: 'none' },
      collectSafeToRepeat: 'yes',
    });
    const found = await problems({
      ASYNCJOB_PROVIDERS: `${mismatched},${invalid},${path.join(dir, 'nowhere.yaml')},no-such-provider`,
    });
    const text = found.map((f) => f.message).join('\n');
    expect(text).toContain('is named "epsilon" but found as "not-epsilon"');
    expect(text).toMatch(/zeta\.json: collectSafeToRepeat: /);
    expect(text).toMatch(/nowhere\.yaml not found/);
    expect(text).toMatch(/no-such-provider not found/);
    expect(found).toHaveLength(4);
  });

  it('refuses a worker with no provider, and lists configuration problems with the rest', async () => {
    const found = await problems({
      ASYNCJOB_LOG_LEVEL: 'loud',
      TEMPORAL_TLS_CA: path.join(dir, 'no-ca.pem'),
      ASYNCJOB_METRICS_ADDRESS: 'nine-four-six-four',
    });
    const text = found.map((f) => f.message).join('\n');
    expect(text).toContain('ASYNCJOB_LOG_LEVEL');
    expect(text).toContain('TEMPORAL_TLS_CA: cannot read');
    expect(text).toContain('ASYNCJOB_PROVIDERS names no provider');
    expect(
      (await problems({ ASYNCJOB_PROVIDERS: 'rest', ASYNCJOB_METRICS_ADDRESS: 'nine-four-six-four' }))
        .map((f) => f.message)
        .join(),
    ).toContain('ASYNCJOB_METRICS_ADDRESS');
  });

  it('reads host:port', () => {
    expect(parseHostPort('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseHostPort('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseHostPort('9464')).toBeUndefined();
    expect(parseHostPort('host:99999')).toBeUndefined();
  });
});

describe('the decider policy in the environment check', () => {
  const servable = async () => ({
    ASYNCJOB_PROVIDERS: await contract('theta', { baseUrl: 'https://theta.example', credential: { scheme: 'none' } }),
  });

  it('D2: unset, it is a warning that anyone who can signal or update the workflow may decide, with the fix; the worker still starts', async () => {
    const env = await servable();
    const report = await checkEnvironment(env);
    expect(report.deciders).toBeUndefined();
    expect(report.findings.filter((f) => f.check === 'decider-policy')).toEqual([
      {
        check: 'decider-policy',
        status: 'warn',
        message: expect.stringContaining(
          'anyone who can signal or update the workflow may decide any escalation under any name (agents and requesters are still refused, G2/D1)',
        ) as string,
        fix: expect.stringMatching(/set ASYNCJOB_DECIDER_POLICY .*docs\/operating\.md#who-may-decide/) as string,
      },
    ]);
    expect(report.findings.filter((f) => f.status === 'problem')).toEqual([]);
    expect(await checkWorkerEnvironment(env)).not.toHaveProperty('deciders');
  });

  it('D2: an invalid policy file is an environment problem naming every issue, and the worker refuses to start (exit 2)', async () => {
    const file = await policyFile(
      'broken-policy.yaml',
      [
        'version: 1',
        'deciders:',
        '  keys:',
        '    alice@example.com: [ed25519:not-a-key]',
        '  rules:',
        '    - name: oncall-may-extend',
        '      whom: [alice@example.com]',
        '      options: [extend]',
        '    - name: bob-may-close',
        '      who: [bob@example.com]',
        '      options: [close]',
        '      largestExtension: soon',
        '',
      ].join('\n'),
    );
    const env = { ...(await servable()), ASYNCJOB_DECIDER_POLICY: file };
    const found = await problems(env);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ check: 'decider-policy', kind: 'environment' });
    const issues = [
      'deciders.keys.alice@example.com.0: must be ed25519: and 64 lowercase hex characters',
      'deciders.rules.0.who: ',
      'deciders.rules.0: Unrecognized key: "whom"',
      'deciders.rules.1.largestExtension: "soon" is not a duration',
    ];
    for (const issue of issues) expect(found[0]!.message).toContain(issue);
    expect(found[0]!.message).toMatch(new RegExp(`^ASYNCJOB_DECIDER_POLICY: decider policy ${file} is invalid: `));
    expect((await checkEnvironment(env)).deciders).toBeUndefined();

    const error = await checkWorkerEnvironment(env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('ASYNCJOB_ERR_CONFIG_INVALID');
    for (const issue of issues) expect((error as ConfigError).message).toContain(issue);

    const unreadable = await problems({ ...env, ASYNCJOB_DECIDER_POLICY: path.join(dir, 'no-policy.yaml') });
    expect(unreadable.map((f) => f.message)).toEqual([
      expect.stringMatching(/no-policy\.yaml is invalid: \(file\): cannot read/),
    ]);
  });

  it('D2: a valid policy file is ok, naming its digest, its rules and its deciders with keys; the worker gets the policy as read', async () => {
    const file = await policyFile('policy.yaml', DECIDER_POLICY);
    const env = { ...(await servable()), ASYNCJOB_DECIDER_POLICY: file };
    const expected = loadDeciderPolicy(file);
    const report = await checkEnvironment(env);
    expect(report.findings.filter((f) => f.status !== 'ok')).toEqual([]);
    expect(report.findings.find((f) => f.check === 'decider-policy')).toEqual({
      check: 'decider-policy',
      status: 'ok',
      message: `ASYNCJOB_DECIDER_POLICY: ${file}: digest: ${expected.digest}, 2 rules, 1 decider with keys`,
    });
    expect(report.deciders).toEqual(expected);
    const worker = await checkWorkerEnvironment(env);
    expect(worker.deciders).toEqual(expected);
    expect(worker.deciders!.policy.rules.map((r) => r.name)).toEqual(['oncall-may-extend', 'alice-may-cancel']);
  });
});
