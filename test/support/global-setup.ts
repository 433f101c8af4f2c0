import type { TestProject } from 'vitest/node';
import { startPostgres, type TestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server for the run (test/support/postgres.ts): its URL to the `postgres` database. */
    postgresUrl: string;
  }
}

/**
 * The run's server, shared by the projects of vitest.config.ts: each project runs this setup (in
 * the same process, each with a fresh copy of this module), the last one's teardown destroys it.
 */
const SHARED = Symbol.for('schoolbridge.test.postgres');
interface Shared {
  server: Promise<TestPostgres>;
  users: number;
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
  const holder = globalThis as { [SHARED]?: Shared };
  const shared = (holder[SHARED] ??= { server: startPostgres(), users: 0 });
  shared.users += 1;
  const server = await shared.server;
  project.provide('postgresUrl', server.url());
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await server.destroy();
  };
}
