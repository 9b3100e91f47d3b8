/**
 * Figure 7: how many status reads per second the simulator serves from its own process (one core), under a
 * load of many concurrent keep-alive connections from undici, so the other figures are known to measure asyncjob
 * and not the simulator.
 */
import { Agent, request } from 'undici';
import { startSimulatorProcess } from '../lib/processes';
import { plainCalls } from '../lib/provider-calls';
import { BENCH_SCENARIO } from '../lib/context';
import { nowMs, percentile, round, rssMiB } from '../lib/stats';

/** Figure 7. */
export interface SimulatorResult {
  connections: number;
  durationSeconds: number;
  statusReadsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  simulatorRssMiB: number;
  errors: number;
}

/** Measures figure 7. */
export async function measureSimulator(quick: boolean, log: (line: string) => void): Promise<SimulatorResult> {
  const token = 'bench-simulator-capacity-token';
  const sim = await startSimulatorProcess({
    dialect: 'rest',
    token,
    scenario: { ...BENCH_SCENARIO, maxRecordedRequests: 100_000 },
  });
  const calls = plainCalls({ baseUrl: sim.url, token });
  const connections = 64;
  const dispatcher = new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });
  try {
    const jobIds = await Promise.all(
      Array.from({ length: 64 }, () => calls.createJob({ report: 'bench', scenario: 'forever' })),
    );
    const run = async (durationMs: number) => {
      const latencies: number[] = [];
      let errors = 0;
      const end = nowMs() + durationMs;
      const t0 = nowMs();
      await Promise.all(
        Array.from({ length: connections * 2 }, async (_, lane) => {
          const url = `${sim.url}/v1/jobs/${jobIds[lane % jobIds.length]}`;
          while (nowMs() < end) {
            const s = nowMs();
            const res = await request(url, { dispatcher, headers: { authorization: `Bearer ${token}` } });
            await res.body.dump();
            if (res.statusCode !== 200) errors++;
            latencies.push(nowMs() - s);
          }
        }),
      );
      return { count: latencies.length, elapsedMs: nowMs() - t0, latencies, errors };
    };
    await run(1_000); // warm-up
    const durationMs = quick ? 3_000 : 8_000;
    const measured = await run(durationMs);
    const result = {
      connections,
      durationSeconds: durationMs / 1000,
      statusReadsPerSecond: Math.round((measured.count / measured.elapsedMs) * 1000),
      latencyP50Ms: round(percentile(measured.latencies, 50), 2),
      latencyP99Ms: round(percentile(measured.latencies, 99), 2),
      simulatorRssMiB: round(rssMiB(sim.pid), 1),
      errors: measured.errors,
    };
    log(`  simulator: ${result.statusReadsPerSecond} status reads/s over ${connections} connections`);
    return result;
  } finally {
    await dispatcher.close();
    await calls.close();
    await sim.stop();
  }
}
