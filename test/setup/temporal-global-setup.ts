/**
 * Starts one real Temporal dev server for the integration run (or uses TEMPORAL_ADDRESS when set) and hands
 * its address to the tests through `inject('temporalAddress')`.
 */
import type { TestProject } from 'vitest/node' with { 'resolution-mode': 'import' };
import { freePort, startDevServer } from '../../src/dev/temporal-server';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** The dev server's Web UI, or '' when the tests use a server of their own. */
    temporalUiUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.TEMPORAL_ADDRESS) {
    project.provide('temporalAddress', process.env.TEMPORAL_ADDRESS);
    project.provide('temporalNamespace', process.env.TEMPORAL_NAMESPACE ?? 'default');
    project.provide('temporalUiUrl', process.env.TEMPORAL_UI_URL ?? '');
    console.log(`[integration] using the Temporal server at ${process.env.TEMPORAL_ADDRESS}`);
    return async () => {};
  }
  const server = await startDevServer({
    // The Web UI too, for the browser test of the escalation view.
    uiPort: await freePort(),
    dynamicConfig: ['limit.historyCount.suggestContinueAsNew=200'],
  });
  console.log(
    `[integration] Temporal dev server ${server.serverVersion} at ${server.address} (cli ${server.cli.path} from ${server.cli.source})`,
  );
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  project.provide('temporalUiUrl', server.uiUrl ?? '');
  return async () => server.stop();
}
