/**
 * The cluster run's separate hosts (scripts/cluster/hosts.ts) on this machine's kernel: a namespaced host reaches
 * a loopback service only through the bridge's forwarded port, never through its own loopback, and a partition
 * cuts it off until it is joined again while the other hosts keep reaching it.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeAddress, Hosts, namespacesUnavailable, type Network } from '../../scripts/cluster/hosts';
import { onBridge } from '../../scripts/cluster/placement';

const run = promisify(execFile);
const NETWORK: Network = { tag: 't', subnet: '10.232.0' };

/** The body a GET from `prefix`'s host receives, or `unreachable`. */
async function get(prefix: string[], url: string): Promise<string> {
  const [command, ...args] = [
    ...prefix,
    process.execPath,
    '-e',
    `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(4000) }).then(r => r.text()).then(t => process.stdout.write(t), () => process.stdout.write('unreachable'))`,
  ];
  return (await run(command!, args)).stdout;
}

describe('cluster hosts: network namespaces joined by a bridge', () => {
  let server: http.Server;
  let port: number;
  let hosts: Hosts | undefined;
  let unavailable: string | undefined;

  beforeAll(async () => {
    unavailable = await namespacesUnavailable();
    // Said, never silent: the cluster run says the same and runs its workers on one host.
    if (unavailable !== undefined) return void console.warn(`cluster hosts tests skipped: ${unavailable}`);
    server = http.createServer((_request, response) => response.end('the service'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    hosts = await Hosts.make(NETWORK, 2, [port]);
  });
  afterAll(async () => {
    await hosts?.remove();
    server?.close();
  });

  it('F5: a host reaches a loopback service through the bridge only, and a partition cuts it off until restored', async (context) => {
    if (!hosts) return context.skip(unavailable);
    const viaBridge = onBridge(`http://127.0.0.1:${port}/`, bridgeAddress(NETWORK));
    expect(viaBridge).toBe(`http://10.232.0.1:${port}/`);
    expect(await get(hosts.workerPrefix(0), viaBridge)).toBe('the service');
    expect(await get(hosts.clientPrefix(), viaBridge)).toBe('the service');
    // Its own loopback is its own: this machine's services are not there.
    expect(await get(hosts.workerPrefix(0), `http://127.0.0.1:${port}/`)).toBe('unreachable');

    await hosts.partition(0);
    expect(await get(hosts.workerPrefix(0), viaBridge)).toBe('unreachable');
    expect(await get(hosts.workerPrefix(1), viaBridge)).toBe('the service');
    await hosts.restore(0);
    // A port joined again forwards once the link is up: a few attempts, no fixed sleep.
    let body = 'unreachable';
    for (let attempt = 0; attempt < 10 && body !== 'the service'; attempt++)
      body = await get(hosts.workerPrefix(0), viaBridge);
    expect(body).toBe('the service');
  });

  it('F5: removing the hosts leaves no namespace or bridge behind', async (context) => {
    if (!hosts) return context.skip(unavailable);
    await hosts.remove();
    const { stdout } = await run('ip', ['netns', 'list']);
    expect(stdout).not.toContain(`asyncjob-${NETWORK.tag}-`);
    await expect(run('ip', ['link', 'show', `aj${NETWORK.tag}br`])).rejects.toThrow();
  });
});
