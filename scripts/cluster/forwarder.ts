/**
 * The bridge's side of the services a namespaced worker may reach: for each port, a TCP listener on the bridge
 * address that pipes every connection to the same port on this machine's loopback, where the Temporal frontend
 * and PostgreSQL listen. Run as its own process (`node --import tsx forwarder.ts HOST PORT...`), so the run's
 * own event loop never sits between a worker and the server. Prints `ready` once every port listens.
 *
 * Only the ports named here cross the bridge: the other services of the Temporal server (history, matching, its
 * membership) and anything else on loopback stay out of a worker's reach, as on a separate machine.
 */
import net from 'node:net';

function forward(host: string, port: number): Promise<void> {
  const server = net.createServer((inbound) => {
    const outbound = net.connect({ host: '127.0.0.1', port });
    inbound.pipe(outbound).pipe(inbound);
    // A reset on either side ends both: a worker cut off by the partition must see its connections fail.
    const end = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.once('error', end).once('close', end);
    outbound.once('error', end).once('close', end);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

async function main(): Promise<void> {
  const [host, ...ports] = process.argv.slice(2);
  if (host === undefined || ports.length === 0) throw new Error('usage: forwarder.ts HOST PORT...');
  await Promise.all(ports.map((port) => forward(host, Number(port))));
  process.stdout.write('ready\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`forwarder: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
