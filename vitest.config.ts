import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'sandbox/**/*.test.ts', 'connectors/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    setupFiles: ['test/support/leak-guard.ts'],
    globalSetup: ['test/support/global-setup.ts'],
  },
});
