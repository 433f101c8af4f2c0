import type { TestProject } from 'vitest/node';
import { CHECKOUT_DATA, changes, listing } from './checkout-data.js';
import { startPostgres, type TestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server for the run (test/support/postgres.ts): its URL to the `postgres` database. */
    postgresUrl: string;
  }
}

/**
 * The run's server and the listing of the checkout's `./data`, shared by the projects of
 * vitest.config.ts: each project runs this setup (in
 * the same process, each with a fresh copy of this module), the last one's teardown destroys it.
 */
const SHARED = Symbol.for('schoolbridge.test.postgres');
interface Shared {
  /** None when SCHOOLBRIDGE_TEST_POSTGRES_URL names a server of the user's. */
  server: Promise<TestPostgres> | undefined;
  users: number;
  /** The checkout's `./data` as the run found it (checkout-data.ts). */
  data: Promise<Map<string, string>>;
}

/**
 * Starts one PostgreSQL for the whole test run; test files make databases of their own on it
 * (test/support/pg-database.ts). SCHOOLBRIDGE_TEST_POSTGRES_URL uses a server of your own instead.
 * A run that cannot get one fails here: the PostgreSQL tests are never skipped.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.SCHOOLBRIDGE_TEST_POSTGRES_URL;
  const holder = globalThis as { [SHARED]?: Shared };
  const shared = (holder[SHARED] ??= { server: external ? undefined : startPostgres({ throwaway: true }), users: 0, data: listing(CHECKOUT_DATA) });
  shared.users += 1;
  const server = await shared.server;
  project.provide('postgresUrl', external ?? server!.url());
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await server?.destroy();
    await checkoutDataUntouched(await shared.data);
  };
}

/**
 * Fails the run if it changed the checkout's `./data`: a test whose daemon has no `store.dir` of its
 * own. By the exit code: vitest prints an error thrown by a global teardown and still exits 0.
 */
async function checkoutDataUntouched(before: Map<string, string>): Promise<void> {
  const changed = changes(before, await listing(CHECKOUT_DATA));
  if (changed.length === 0) return;
  console.error(`test: the test run changed ${CHECKOUT_DATA}: ${changed.join(', ')}. A test that starts a daemon must give it a store.dir `
    + 'of its own (test/support/temp.ts); or something else wrote there meanwhile, such as `npm start` from this checkout.');
  process.exitCode = 1;
}
