import type { Replica, StatePatch } from '../port.js';
import type { Db } from './db.js';

/** Small state and the replicas on PostgreSQL. */
export async function getState(db: Db, key: string): Promise<unknown> {
  const { rows } = await db.query<{ value: string }>('SELECT value FROM state WHERE key = $1', [key]);
  return rows[0] ? JSON.parse(rows[0].value) : undefined;
}

export async function putState(db: Db, patch: StatePatch): Promise<void> {
  const entries = Object.entries(patch);
  const gone = entries.filter(([, v]) => v === null || v === undefined).map(([k]) => k);
  const set = entries.filter(([, v]) => v !== null && v !== undefined);
  if (gone.length > 0) await db.query('DELETE FROM state WHERE key = ANY($1::text[])', [gone]);
  if (set.length > 0) {
    await db.query('INSERT INTO state (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [set.map(([k]) => k), set.map(([, v]) => JSON.stringify(v))]);
  }
}

export async function beat(db: Db, self: Omit<Replica, 'heartbeatAt' | 'url'>, now: number, url: string | undefined): Promise<void> {
  await db.query(`INSERT INTO replica (id, host, pid, started_at, heartbeat_at, url) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, url = coalesce(excluded.url, replica.url)`,
  [self.id, self.host, self.pid, self.startedAt, now, url ?? null]);
}

export async function live(db: Db, since: number): Promise<Replica[]> {
  const { rows } = await db.query<{ id: string; host: string; pid: number; started_at: number; heartbeat_at: number; url: string | null }>(
    'SELECT * FROM replica WHERE heartbeat_at > $1 ORDER BY started_at', [since]);
  return rows.map((r) => ({ id: r.id, host: r.host, pid: r.pid, startedAt: r.started_at, heartbeatAt: r.heartbeat_at, ...(r.url ? { url: r.url } : {}) }));
}

export async function forget(db: Db, self: string, before: number): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM replica WHERE heartbeat_at < $1 AND id <> $2', [before, self]);
  return rowCount ?? 0;
}

/** A replica that stops leaves: its leases are free at once. */
export async function leave(db: Db, id: string): Promise<void> {
  await db.query('DELETE FROM replica WHERE id = $1', [id]);
}
