/**
 * An OAuth2 provider through the real activities: the simulator (which takes the token the OAuth2 server issued)
 * refuses the first status read with 401; the token is renewed at the OAuth2 server and the read resent once, and
 * the journal says so (both requests counted, the first answer kept). Neither the client secret nor a token reaches
 * the store or the logs.
 */
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Events, OAuth2Server, type MutableResponse } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileArtifactStore } from '../../src/adapters/artifacts/artifact-store';
import { adapterFromContract, loadProviderContract } from '../../src/adapters/providers';
import { createProviderRegistry, type ProviderRegistry } from '../../src/adapters/providers/registry';
import { openSqliteStore, type SqliteOperationStore } from '../../src/adapters/store/sqlite-store';
import { createActivities, type AsyncJobActivities } from '../../src/activities';
import { storyText } from '../../src/audit/story';
import { startSimulator, type Simulator } from '../../src/simulator';
import { newRecord, reserveStatus, step } from './harness';

const ACCESS_TOKEN = 'oauth-access-token-3b9d0e6f2a7c41d8';
const CLIENT_SECRET = 'oauth-client-secret-8c2f5a1e9d07';

describe('a provider on oauth2-client-credentials, through the activities (T4, B2)', () => {
  let idp: OAuth2Server;
  let sim: Simulator;
  let dir: string;
  let store: SqliteOperationStore;
  let registry: ProviderRegistry;
  let activities: AsyncJobActivities;
  const lines: string[] = [];
  let tokenRequests = 0;

  beforeAll(async () => {
    idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    // The simulator takes one bearer token: the OAuth2 server issues that one.
    idp.service.on(Events.BeforeResponse, (response: MutableResponse) => {
      tokenRequests += 1;
      if (typeof response.body === 'object') response.body.access_token = ACCESS_TOKEN;
    });
    sim = await startSimulator({
      dialect: 'rest',
      token: ACCESS_TOKEN,
      scenario: {
        scripts: {
          denied: {
            steps: [{ state: 'running', polls: 1 }, { state: 'succeeded' }],
            faults: [{ on: 'status', nth: 1, fault: { kind: 'http_error', status: 401 } }],
          },
        },
      },
    });
    dir = await mkdtemp(path.join(tmpdir(), 'asyncjob-renewal-'));
    store = await openSqliteStore({ path: path.join(dir, 'store.db') });
    const rest = await loadProviderContract('rest', { baseUrl: sim.url });
    registry = await createProviderRegistry({
      providers: [
        adapterFromContract({
          ...rest,
          name: 'reports',
          credential: {
            scheme: 'oauth2-client-credentials',
            tokenUrl: `${idp.issuer.url}/token`,
            clientId: 'reports-activities',
            secretEnv: 'REPORTS_CLIENT_SECRET',
            clientAuthentication: 'basic',
          },
        }),
      ],
      env: { REPORTS_CLIENT_SECRET: CLIENT_SECRET },
    });
    activities = createActivities({
      store,
      providers: registry,
      artifacts: new FileArtifactStore(path.join(dir, 'artifacts')),
      logger: {
        info: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
        warn: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
      },
    });
  });
  afterAll(async () => {
    await registry?.close();
    await store?.close();
    await sim?.stop();
    await idp?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('T4, B2: a 401 on a status read renews the token and resends once; the journal keeps both answers', async () => {
    const payload = { report: 'q3', scenario: 'denied' };
    const intent = await step(activities.recordIntent, { record: newRecord('reports', payload) });
    const created = await step(activities.createJob, { record: intent, random: 0.5, payload });
    expect(created.localState).toBe('accepted');
    expect(tokenRequests).toBe(1);
    const facts = registry.get('reports').facts;
    const reserved = await reserveStatus(created, facts);
    const read = await step(activities.readStatus, { record: reserved, random: 0.5 });
    expect(read.localState).toBe('observing');
    expect(tokenRequests).toBe(2);
    const statusRequests = sim.requests({ action: 'status' });
    expect(statusRequests.map((r) => r.status)).toEqual([401, 200]);
    expect(read.used.statusRequests).toBe(reserved.used.statusRequests + 1);
    const observation = (await store.entries(created.operationId))
      .map((e) => e.entry)
      .find((e) => e.body.kind === 'observation' && e.body.action === 'status')!;
    expect(observation.body).toMatchObject({
      transport: 'response',
      httpStatus: 200,
      credentialRenewed: { httpStatus: 401 },
    });
    expect(storyText(observation)).toContain('resent once after a 401 with a renewed credential');
  });

  it('T4: neither the client secret nor the access token is in the store or the logs', async () => {
    const bytes = Buffer.concat([
      await readFile(path.join(dir, 'store.db')),
      await readFile(path.join(dir, 'store.db-wal')).catch(() => Buffer.alloc(0)),
      Buffer.from(lines.join('\n')),
    ]);
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [
      CLIENT_SECRET,
      ACCESS_TOKEN,
      Buffer.from(`reports-activities:${CLIENT_SECRET}`).toString('base64'),
    ])
      expect(bytes.includes(secret)).toBe(false);
  });
});
