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
  project.provide('postgresUrl', server.url());
  return () => server.destroy();
}

