import type { KnipConfig } from 'knip';

/**
 * Dead code check (`npm run lint`): every file, export, type and dependency must be reachable from an entry below.
 * Entry files keep their exports (`includeEntryExports` stays off): the package entries' exports are the public
 * API. Two entries come from knip's plugins and are not repeated here: `src/workflows/index.ts` (the Temporal
 * plugin: the `workflowsPath` target) and the files package.json scripts run with tsx (`bench/run.ts`, ...); the
 * vitest plugin adds the test files and global setups of vitest.config.mts.
 */
const config: KnipConfig = {
  entry: [
    // The package's exports (package.json `exports` name their build in dist/).
    'src/index.ts',
    'src/client-api.ts',
    'src/worker-api.ts',
    'src/testing.ts',
    'src/workflow-api.ts',
    // The CLI, loaded by bin/asyncjob with a computed path.
    'src/cli.ts',
    'scripts/**/*.{ts,mjs}',
    'bench/compare.ts',
    // Files started as processes or bundled by path, never imported.
    'bench/lib/worker-process.ts',
    'bench/lib/simulator-process.ts',
    'bench/bare/workflows.ts',
    // Preloaded into the workflow bundle by path (`WORKFLOW_BUNDLER_OPTIONS`), never imported.
    'src/core/zod-warm-up.ts',
    'test/**/*.test.ts',
    'test/integration/faults/worker-entry.ts',
    'test/store/workers/append-worker.ts',
    'test/adapters/store/workers/checkpoint-writer.ts',
  ],
  project: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.{ts,mjs}', 'bench/**/*.ts', 'bin/asyncjob', 'bin/*.cjs'],
  // Off (knip's default), said here because it is the rule: an entry's exports are its API, used or not.
  includeEntryExports: false,
  ignoreDependencies: [
    // Imported by nothing of ours: it makes npm hoist one protobufjs 8 for the Temporal packages (README.md).
    'protobufjs',
    // Types for `ms`, imported by the Temporal SDK's declarations and shipped by no `ms` 3 canary (README.md).
    '@types/ms',
  ],
};

export default config;
