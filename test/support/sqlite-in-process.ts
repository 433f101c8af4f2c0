import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { systemClock } from '../../src/clock.js';
import { createLocalRoles } from '../../src/store/local-roles.js';
import type { Store } from '../../src/store/index.js';
import { openDatabase } from '../../src/store/sqlite/handles.js';
import { leasesOf } from '../../src/store/sqlite/leases.js';
import { operations, type OperationName, type Operations } from '../../src/store/sqlite/operations.js';
import { sqlitePortMethods } from '../../src/store/sqlite/port-methods.js';
import { migrate } from '../../src/store/sqlite/schema.js';
import type { CallThread } from '../../src/store/sqlite/thread-client.js';

/**
 * The SQLite engine with its operations run in the test's own thread, each call one transaction
 * (as the database thread runs them, without its group commits): for a test that changes what the
 * engine's modules see (a mocked registry), which a database thread, loading them afresh, would not.
 */
export function inProcessSqliteStore(file: string): Store {
  const self = { id: randomUUID(), host: 'test', pid: process.pid, startedAt: Date.now() };
  let db: Database.Database | undefined;
  let ops: Operations | undefined;
  const call = (async (op: OperationName, ...args: unknown[]) => {
    const conn = db!;
    const leases = leasesOf(conn);
    leases.begin();
    try {
      const value = conn.transaction(() => (ops![op] as (db: Database.Database, ...rest: unknown[]) => unknown)(conn, ...args))();
      leases.commit();
      return value;
    } catch (error) {
      leases.rollbackTo();
      leases.commit();
      throw error;
    }
  }) as CallThread;
  return {
    name: 'store', engine: 'sqlite', shared: false, replicaId: self.id, roles: createLocalRoles(self.id), watch: () => () => {},
    ...sqlitePortMethods(call, systemClock, () => undefined),
    leasesStand: () => true,
    health: () => ({ ok: true }),
    onHealth: () => () => {},
    advertise: async () => {},
    async start() {
      db = openDatabase(file);
      migrate(db);
      ops = operations(self);
    },
    async stop() {
      db?.close();
    },
  };
}
