// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const io = (message) => ({ group: [...nodeBuiltins, ...ioPackages], message });
const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'http',
  'https',
  'net',
  'crypto',
  'child_process',
  'os',
  'stream',
  'zlib',
  'url',
  'util',
  'worker_threads',
  'dns',
  'tls',
  'events',
  'timers',
];
const ioPackages = [
  'undici',
  'pg',
  'better-sqlite3',
  'yaml',
  '@temporalio/worker',
  '@temporalio/client',
  '@temporalio/activity',
  '@temporalio/testing',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.temporal/**',
      '.conformance/**',
      '.node/**',
      '.asyncjob/**',
      'coverage/**',
      'test/histories/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
    },
  },
  {
    // Small modules and small functions (issue 19): a module over 400 lines or a function over 80 is split.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Rule: src/core is pure and deterministic; nothing with I/O, no clock, no randomness.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            io('src/core does no I/O.'),
            { group: ['../*'], message: 'src/core imports nothing outside itself.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'fetch', 'setTimeout', 'setInterval', 'require'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'src/core takes time as an argument.' },
        { object: 'Math', property: 'random', message: 'src/core takes random numbers as arguments.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'src/core takes time as an argument.',
        },
      ],
    },
  },
  {
    // Rule: workflow code imports only src/core and @temporalio/workflow (activities as types only).
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            io('Workflow code is deterministic: no I/O.'),
            {
              group: ['../*', '!../core', '!../core/*'],
              message: 'Workflows import only src/core, @temporalio/workflow and (as types) activities.',
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'fetch', 'require'],
    },
  },
  {
    // Rule: asyncjob/workflow runs in a user's workflow: src/core, the workflows' messages and the SDK only.
    files: ['src/workflow-api.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            io('Workflow code is deterministic: no I/O.'),
            {
              // The Nexus service definition is workflow-safe (nexus-rpc's definition helpers and types only).
              group: [
                './*',
                '!./core',
                '!./core/*',
                '!./workflows',
                '!./workflows/*',
                '!./nexus',
                './nexus/*',
                '!./nexus/service',
              ],
              message:
                'asyncjob/workflow imports only src/core, src/workflows, the Nexus service definition and the workflow SDK.',
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'fetch', 'require'],
    },
  },
);
