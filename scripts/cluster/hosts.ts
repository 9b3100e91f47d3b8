/**
 * Separate hosts on one machine: each worker, and the client that reads results back, in a network namespace of
 * its own (its own loopback, its own interface), joined to this machine by a bridge the run makes. Across the
 * bridge a namespace reaches only what a real deployment's workers reach: the Temporal frontend and PostgreSQL
 * (forwarded from this machine's loopback by {@link file://./forwarder.ts}), and the object store and the
 * providers (listening on the bridge address itself). A partition takes one namespace's side of the bridge down:
 * its packets are dropped, its connections hang, as when a machine's network fails.
 *
 * Making namespaces needs CAP_NET_ADMIN (root); {@link namespacesUnavailable} says why not when it cannot.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A network of hosts: a short tag naming its namespaces (`asyncjob-<tag>-w0`) and interfaces, and a /24 whose .1
 * is this machine's side of the bridge, worker N is .(10+N) and the client .200. Two networks on one machine need
 * different tags and subnets.
 */
export interface Network {
  tag: string;
  /** The first three octets, e.g. `10.231.0`. */
  subnet: string;
}

/** The cluster run's network. */
export const CLUSTER_NETWORK: Network = { tag: 'c', subnet: '10.231.0' };

/** This machine's address on `network`'s bridge, where the hosts reach the run's services. */
export const bridgeAddress = (network: Network): string => `${network.subnet}.1`;

const CLIENT_HOST = 200;

const ip = (...args: string[]): Promise<unknown> => run('ip', args);

/** Why network namespaces cannot be made here, or undefined when they can (a probe namespace is made and removed). */
export async function namespacesUnavailable(): Promise<string | undefined> {
  const probe = `asyncjob-probe-${process.pid}`;
  try {
    await ip('netns', 'add', probe);
    await ip('netns', 'del', probe);
    return undefined;
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    return `\`ip netns add\` failed (${detail || 'no detail'}): network namespaces need root (CAP_NET_ADMIN) and iproute2`;
  }
}

/** One namespace on the bridge. */
interface Host {
  namespace: string;
  /** Its interface on this machine's side, which a partition takes down. */
  bridgePort: string;
  address: string;
}

const bridgeOf = (network: Network): string => `aj${network.tag}br`;

async function addHost(network: Network, name: string, hostNumber: number): Promise<Host> {
  const host: Host = {
    namespace: `asyncjob-${network.tag}-${name}`,
    bridgePort: `aj${network.tag}${name}h`,
    address: `${network.subnet}.${hostNumber}`,
  };
  const inside = `aj${network.tag}${name}n`;
  await ip('netns', 'add', host.namespace);
  await ip('link', 'add', host.bridgePort, 'type', 'veth', 'peer', 'name', inside);
  await ip('link', 'set', host.bridgePort, 'master', bridgeOf(network), 'up');
  await ip('link', 'set', inside, 'netns', host.namespace);
  const inNamespace = (...args: string[]) => ip('-n', host.namespace, ...args);
  await inNamespace('link', 'set', 'lo', 'up');
  await inNamespace('link', 'set', inside, 'name', 'eth0');
  await inNamespace('addr', 'add', `${host.address}/24`, 'dev', 'eth0');
  await inNamespace('link', 'set', 'eth0', 'up');
  return host;
}

/** Removes `network`'s namespaces (their interfaces go with them) and bridge, as an earlier run that died left them. */
async function removeNetwork(network: Network): Promise<void> {
  const { stdout } = (await run('ip', ['netns', 'list'])) as { stdout: string };
  for (const line of stdout.split('\n')) {
    const name = line.split(' ')[0];
    if (name?.startsWith(`asyncjob-${network.tag}-`)) await ip('netns', 'del', name).catch(() => undefined);
  }
  await ip('link', 'del', bridgeOf(network)).catch(() => undefined);
}

/** The run's hosts. */
export class Hosts {
  private constructor(
    private readonly network: Network,
    private readonly workers: Host[],
    private readonly client: Host,
    private readonly forwarder: ChildProcess,
  ) {}

  /**
   * Makes the bridge, `workerCount` worker namespaces and a client namespace, and forwards `loopbackPorts` (the
   * Temporal frontend's, PostgreSQL's) from the bridge address to this machine's loopback.
   */
  static async make(network: Network, workerCount: number, loopbackPorts: number[]): Promise<Hosts> {
    await removeNetwork(network);
    const bridge = bridgeOf(network);
    await ip('link', 'add', bridge, 'type', 'bridge');
    await ip('addr', 'add', `${bridgeAddress(network)}/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    const workers: Host[] = [];
    for (let slot = 0; slot < workerCount; slot++) workers.push(await addHost(network, `w${slot}`, 10 + slot));
    const client = await addHost(network, 'cl', CLIENT_HOST);
    const forwarder = await startForwarder(bridgeAddress(network), loopbackPorts);
    return new Hosts(network, workers, client, forwarder);
  }

  /** The command prefix that runs a program in worker `slot`'s namespace. */
  workerPrefix(slot: number): string[] {
    return ['ip', 'netns', 'exec', this.workers[slot]!.namespace];
  }

  /** The command prefix that runs a program on the client's host. */
  clientPrefix(): string[] {
    return ['ip', 'netns', 'exec', this.client.namespace];
  }

  /** Cuts worker `slot` off: its side of the bridge goes down, every packet to or from it is dropped. */
  async partition(slot: number): Promise<void> {
    await ip('link', 'set', this.workers[slot]!.bridgePort, 'down');
  }

  /** Joins worker `slot` to the bridge again. */
  async restore(slot: number): Promise<void> {
    await ip('link', 'set', this.workers[slot]!.bridgePort, 'up');
  }

  /** Removes the namespaces and the bridge and stops the forwarder. Safe to repeat. */
  async remove(): Promise<void> {
    this.forwarder.kill('SIGTERM');
    await removeNetwork(this.network);
  }
}

/** Starts the forwarder process and waits until it listens on every port. */
function startForwarder(address: string, ports: number[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'forwarder.ts'), address, ...ports.map(String)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bridge forwarder exited ${code}`)));
    child.stdout!.once('data', () => resolve(child));
  });
}
