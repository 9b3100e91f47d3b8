import { defineConfig } from 'vitest/config';

/**
 * Two projects, both run by `npm test`: `unit` (pure code, adapters against loopback servers) and
 * `integration` (a real Temporal dev server started once for the run by the global setup). Both make their
 * temporary files in one directory per run, removed at its end (test/setup/temp-root.ts).
 */
export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/integration/**',
            'test/workflows/**',
            'test/conformance/**',
            'test/mcp/integration/**',
            'node_modules/**',
          ],
          globalSetup: ['test/setup/temp-root.ts'],
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // After the unit project: the integration files share one dev server and two cores.
          sequence: { groupOrder: 1 },
          include: [
            'test/integration/**/*.test.ts',
            'test/workflows/**/*.test.ts',
            'test/conformance/**/*.test.ts',
            'test/mcp/integration/**/*.test.ts',
          ],
          globalSetup: ['test/setup/temp-root.ts', 'test/setup/temporal-global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each file starts its own worker; two cores run two files side by side at most.
          maxWorkers: 2,
        },
      },
    ],
  },
});
