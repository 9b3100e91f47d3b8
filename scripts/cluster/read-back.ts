/**
 * The client on a host of its own: reads every operation's result back through the library's documented call
 * (`AsyncJobClient.readResult`, which verifies the bytes against the sha256 and size the workflow recorded), from
 * the object store, with nothing but the environment a service on another machine would have (`TEMPORAL_ADDRESS`,
 * `ASYNCJOB_TASK_QUEUE`, `ASYNCJOB_ARTIFACTS` and the AWS variables). Operation IDs come as a JSON array on stdin;
 * one JSON line per operation goes to stdout: `{operationId, sha256, sizeBytes}` or `{operationId, error}`.
 *
 *   ip netns exec asyncjob-cl node --import tsx scripts/cluster/read-back.ts < ids.json
 */
import { text } from 'node:stream/consumers';
import { digestOf } from '../../src/adapters/artifacts/artifact-store';
import { AsyncJobClient } from '../../src/client';

async function readBack(client: AsyncJobClient, operationId: string): Promise<Record<string, unknown>> {
  try {
    return { operationId, ...(await digestOf(await client.readResult(operationId))) };
  } catch (error) {
    return { operationId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

async function main(): Promise<void> {
  const ids = JSON.parse(await text(process.stdin)) as string[];
  const client = await AsyncJobClient.connect();
  try {
    for (const operationId of ids) process.stdout.write(`${JSON.stringify(await readBack(client, operationId))}\n`);
  } finally {
    await client.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`read-back: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
