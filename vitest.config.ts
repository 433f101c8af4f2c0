import { defineConfig } from 'vitest/config';

/**
 * Test files that replace a module with `vi.mock`: each runs in a process of its own. The others share
 * one process (`isolate: false`): the modules they import are loaded once, not once per file, which
 * is most of a small file's time. So a support module must not register hooks when it is imported
 * (it is imported once per process): it exports a `use…()` that each test file calls.
 */
const MOCKING = ['src/store/string-keys.test.ts', 'src/streams/string-keys.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    setupFiles: ['test/support/leak-guard.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['src/**/*.test.ts', 'sandbox/**/*.test.ts', 'connectors/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: MOCKING,
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING } },
    ],
  },
});
