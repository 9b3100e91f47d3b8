/**
 * Where a cluster run's processes live. Without `--hosts`, everything shares this machine's loopback and the file
 * store. With it, each worker and the reading client get a host of their own (network namespaces, scripts/cluster/
 * hosts.ts), results go to an object store, and addresses are rewritten to the bridge. Where namespaces cannot be
 * made, the run says so, keeps the object store, and runs the workers here without a partition.
 */
import path from 'node:path';
import { bridgeAddress, CLUSTER_NETWORK, Hosts, namespacesUnavailable } from './hosts';
import { startObjectStore, type ObjectStore } from './object-store';

/** The run's placement. */
export interface Placement {
  /** Separate hosts, when made. */
  hosts?: Hosts;
  /** Why `--hosts` ran without them. */
  hostsUnavailable?: string;
  /** The object store, with `--hosts`. */
  objectStore?: ObjectStore;
  /** The interface the run's own servers (the simulators, the object store) listen on. */
  listenHost: string;
  /** `url` (a loopback address of this machine's) as the workers reach it. */
  reach(url: string): string;
  /** The command prefix of worker `slot`'s host. */
  workerPrefix(slot: number): string[];
  /** The command prefix of the reading client's host. */
  clientPrefix(): string[];
  remove(): Promise<void>;
}

const here = (url: string): string => url;
const noPrefix = (): string[] => [];

const BRIDGE_ADDRESS = bridgeAddress(CLUSTER_NETWORK);

/** Every loopback host in `url` (a URL or `host:port`) becomes `address`. */
export function onBridge(url: string, address: string): string {
  return url.replace(/(^|\/\/|@)(127\.0\.0\.1|localhost)(?=:)/g, `$1${address}`);
}

const portOf = (address: string): number => Number(/:(\d+)(?:\/|$)/.exec(address)?.[1]);

/**
 * Places the run: `hosts` false keeps everything here; true makes `workers` worker hosts and a client host joined
 * to the Temporal frontend at `temporalAddress` and PostgreSQL at `storeUrl`, and starts the object store.
 */
export async function placeRun(
  hosts: boolean,
  workers: number,
  cluster: { temporalAddress: string; storeUrl: string },
  logDir: string,
): Promise<Placement> {
  if (!hosts)
    return {
      listenHost: '127.0.0.1',
      reach: here,
      workerPrefix: noPrefix,
      clientPrefix: noPrefix,
      remove: async () => {},
    };
  const unavailable = await namespacesUnavailable();
  if (unavailable !== undefined) {
    console.log(
      `cluster run: --hosts: ${unavailable}; workers run on this machine's loopback, and no partition is made`,
    );
    const objectStore = await startObjectStore('127.0.0.1', path.join(logDir, 'object-store.log'));
    return {
      hostsUnavailable: unavailable,
      objectStore,
      listenHost: '127.0.0.1',
      reach: here,
      workerPrefix: noPrefix,
      clientPrefix: noPrefix,
      remove: async () => objectStore.stop(),
    };
  }
  const made = await Hosts.make(CLUSTER_NETWORK, workers, [portOf(cluster.temporalAddress), portOf(cluster.storeUrl)]);
  const objectStore = await startObjectStore(BRIDGE_ADDRESS, path.join(logDir, 'object-store.log'));
  return {
    hosts: made,
    objectStore,
    listenHost: BRIDGE_ADDRESS,
    reach: (url) => onBridge(url, BRIDGE_ADDRESS),
    workerPrefix: (slot) => made.workerPrefix(slot),
    clientPrefix: () => made.clientPrefix(),
    remove: async () => {
      objectStore.stop();
      await made.remove();
    },
  };
}
