/**
 * A provider simulator in its own process (one core of its own, so it never competes with the worker or the
 * load generator for an event loop). Configured by one JSON argument (`SimulatorOptions`); sends its URL to the
 * parent over IPC; the parent reads its accounting over HTTP (`/_sim/requests`, `/_sim/jobs`).
 */
import { startSimulator, type SimulatorOptions } from '../../src/simulator';

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions;
  const sim = await startSimulator(options);
  const stop = (): void => void sim.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('message', (m) => {
    if (m === 'stop') stop();
  });
  process.send?.({ url: sim.url });
}

main().catch((err: unknown) => {
  console.error('bench simulator process failed:', err);
  process.exit(1);
});
