import type Database from 'better-sqlite3';
import type { Replica, StatePatch } from '../port.js';
import { sql } from './statements.js';

/** Small state and the replicas on SQLite. */
type Db = Database.Database;

export function getState(db: Db, key: string): unknown {
  const row = sql(db, 'SELECT value FROM state WHERE key = ?').get(key) as { value: string } | undefined;
  return row ? JSON.parse(row.value) : undefined;
}

export function putState(db: Db, patch: StatePatch): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || value === undefined) sql(db, 'DELETE FROM state WHERE key = ?').run(key);
    else sql(db, 'INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, JSON.stringify(value));
  }
}

export function beat(db: Db, self: Omit<Replica, 'heartbeatAt' | 'url'>, now: number, url: string | undefined): void {
  sql(db, `INSERT INTO replica (id, host, pid, started_at, heartbeat_at, url) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, url = coalesce(excluded.url, replica.url)`)
    .run(self.id, self.host, self.pid, self.startedAt, now, url ?? null);
}

export function live(db: Db, since: number): Replica[] {
  const rows = sql(db, 'SELECT * FROM replica WHERE heartbeat_at > ? ORDER BY started_at').all(since) as {
    id: string; host: string; pid: number; started_at: number; heartbeat_at: number; url: string | null;
  }[];
  return rows.map((r) => ({ id: r.id, host: r.host, pid: r.pid, startedAt: r.started_at, heartbeatAt: r.heartbeat_at, ...(r.url ? { url: r.url } : {}) }));
}

export function forget(db: Db, self: string, before: number): number {
  return sql(db, 'DELETE FROM replica WHERE heartbeat_at < ? AND id <> ?').run(before, self).changes;
}

/** A replica that stops leaves: its leases are free at once. */
export function leave(db: Db, id: string): void {
  sql(db, 'DELETE FROM replica WHERE id = ?').run(id);
}

/** The lock is ours: every other replica row is a process that died holding it. */
export function takeOver(db: Db, id: string): void {
  sql(db, 'DELETE FROM replica WHERE id <> ?').run(id);
}
