/**
 * The client on a host of its own: reads every operation's result back through the library's documented call
 * (`AsyncJobClient.readResult`, which verifies the bytes against the sha256 and size the workflow recorded), from
 * the object store, with nothing but the environment a service on another machine would have (`TEMPORAL_ADDRESS`,
 * `ASYNCJOB_TASK_QUEUE`, `ASYNCJOB_ARTIFACTS` and the AWS variables). Operation IDs come as a JSON array on stdin;
 * one JSON line per operation goes to stdout: `{operationId, sha256, sizeBytes}` or `{operationId, error}`.
 *
 *   ip netns exec asyncjob-cl node --import tsx scripts/cluster/read-back.ts < ids.json
 */
import { createHash } from 'node:crypto';
import { text } from 'node:stream/consumers';
import { AsyncJobClient } from '../../src/client';

async function readBack(client: AsyncJobClient, operationId: string): Promise<Record<string, unknown>> {
  try {
    const hash = createHash('sha256');
    let sizeBytes = 0;
    for await (const chunk of await client.readResult(operationId)) {
      hash.update(chunk as Uint8Array);
      sizeBytes += (chunk as Uint8Array).byteLength;
    }
    return { operationId, sha256: hash.digest('hex'), sizeBytes };
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
