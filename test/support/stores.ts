import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { Clock } from '../../src/clock.js';
import { createPgStore } from '../../src/store/postgres/pg-store.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/index.js';
import { testDatabase } from './pg-database.js';

/**
 * Stores for tests on real engines, on fresh storage each: SQLite in a temp directory, PostgreSQL in
 * a new database of the run's server (global-setup.ts). `cleanup` stops the store and removes what
 * it made. Neither is ever faked: what passes here passes on the engine a user runs.
 */
export interface TestStore {
  store: Store;
  /** The SQLite directory or the PostgreSQL URL. */
  where: string;
  cleanup(): Promise<void>;
}

export type Engine = 'sqlite' | 'postgres';
export const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];

const silent = pino({ level: 'silent' });

export async function testStore(engine: Engine = 'sqlite', options: { log?: Logger; clock?: Clock; start?: boolean } = {}): Promise<TestStore> {
  const log = options.log ?? silent;
  const clock = options.clock ? { clock: options.clock } : {};
  if (engine === 'postgres') {
    const url = await testDatabase('t');
    const store = createPgStore({ url, log, ...clock });
    if (options.start !== false) await store.start();
    return { store, where: url, cleanup: () => store.stop() };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'sb-store-'));
  const store = createSqliteStore({ dir, log, ...clock });
  if (options.start !== false) await store.start();
  return {
    store,
    where: dir,
    async cleanup() {
      await store.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
