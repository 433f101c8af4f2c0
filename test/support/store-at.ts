import type { Logger } from 'pino';
import type { Clock } from '../../src/clock.js';
import type { Store } from '../../src/store/index.js';
import { createPgStore } from '../../src/store/postgres/pg-store.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Engine } from './stores.js';
import { tempDir } from './temp.js';

/**
 * Where a store lives, as the kill -9 tests tell their child processes: the engine and its SQLite
 * directory or PostgreSQL URL. The parent makes fresh storage (`freshStoreAt`), each child and the
 * parent's final look open the same storage (`openStoreAt`).
 */
export interface StoreAt {
  engine: Engine;
  where: string;
}

/** A store on that storage, not started. Safe to import in a child process (no vitest). */
export function openStoreAt(at: StoreAt, log: Logger, clock?: Clock): Store {
  const options = { log, ...(clock ? { clock } : {}) };
  return at.engine === 'postgres' ? createPgStore({ ...options, url: at.where, poolSize: 4 }) : createSqliteStore({ ...options, dir: at.where });
}

/** Fresh, empty storage: a temp directory, or a new database on the test run's PostgreSQL. */
export async function freshStoreAt(engine: Engine): Promise<{ at: StoreAt; cleanup(): Promise<void> }> {
  if (engine === 'postgres') {
    // Imported here: pg-database.ts reads vitest's context, which a child process does not have.
    const { testDatabase } = await import('./pg-database.js');
    return { at: { engine, where: await testDatabase('crash') }, cleanup: async () => {} };
  }
  const { dir, cleanup } = await tempDir('sb-crash-');
  return { at: { engine, where: dir }, cleanup };
}
