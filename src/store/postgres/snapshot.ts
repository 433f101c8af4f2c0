import type { FreshRows, SnapshotIndex, SnapshotRow, SnapshotStream, StagedRow, StatePatch } from '../port.js';
import { CHAIN_LENGTH, deliveryId, snapshotTable } from '../tables.js';
import type { Db } from './db.js';
import { enqueueLazy, insertDeliveries, keepCreatedTexts } from './outbox.js';
import { putState } from './state.js';

/**
 * The poll snapshot on PostgreSQL: the layout of the SQLite one (sqlite/snapshot.ts). A fresh
 * snapshot's rows arrive as the list worker's bytes in one bytea and are split in SQL, so neither
 * side escapes 300,000 JSON texts into an array literal.
 */
interface Row {
  key: number;
  chain: string;
  body: string;
  raw_hash: string | null;
}

const toRow = (row: Row): SnapshotRow => ({ key: row.key, chain: row.chain, body: row.body, rawHash: row.raw_hash });

export async function size(db: Db, stream: SnapshotStream): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${snapshotTable(stream)}`);
  return rows[0]!.n;
}

interface Meta {
  version: number;
  created_detected_at: string | null;
  created_after: number | null;
  created_owed: number;
  created_connectors: string | null;
}

async function meta(db: Db, stream: SnapshotStream, lock = false): Promise<Meta> {
  const { rows } = await db.query<Meta>(`SELECT * FROM snapshot_meta WHERE stream = $1${lock ? ' FOR UPDATE' : ''}`, [stream]);
  return rows[0]!;
}

export async function version(db: Db, stream: SnapshotStream): Promise<number> {
  return (await meta(db, stream)).version;
}

const bumpVersion = (db: Db, stream: SnapshotStream) => db.query('UPDATE snapshot_meta SET version = version + 1 WHERE stream = $1', [stream]);

export async function index(db: Db, stream: SnapshotStream): Promise<SnapshotIndex> {
  const { rows } = await db.query<{ key: number; raw_hash: string | null }>(`SELECT key, raw_hash FROM ${snapshotTable(stream)} ORDER BY key`);
  return { version: await version(db, stream), keys: rows.map((r) => r.key), hashes: rows.map((r) => r.raw_hash) };
}

export async function rows(db: Db, stream: SnapshotStream, keys: readonly number[]): Promise<SnapshotRow[]> {
  const result = await db.query<Row>(`SELECT * FROM ${snapshotTable(stream)} WHERE key = ANY($1::bigint[]) ORDER BY key`, [keys]);
  return result.rows.map(toRow);
}

export async function scan(db: Db, stream: SnapshotStream, after: number | undefined, limit: number): Promise<SnapshotRow[]> {
  const result = await db.query<Row>(`SELECT * FROM ${snapshotTable(stream)} WHERE key > $1 ORDER BY key LIMIT $2`, [after ?? Number.MIN_SAFE_INTEGER, limit]);
  return result.rows.map(toRow);
}

export async function begin(db: Db, stream: SnapshotStream, kind: 'fresh' | 'changes'): Promise<void> {
  await discard(db, stream);
  await db.query(kind === 'fresh'
    ? `CREATE TABLE ${snapshotTable(stream, 'next')} (key bigint PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text)`
    // Scratch: a crash loses it and the next cycle finds the same changes again, so no WAL for it.
    : `CREATE UNLOGGED TABLE ${snapshotTable(stream, 'changes')} (key bigint PRIMARY KEY, chain text NOT NULL, body text, raw_hash text, change_id text, change_json text)`);
}

export async function discard(db: Db, stream: SnapshotStream): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${snapshotTable(stream, 'next')}; DROP TABLE IF EXISTS ${snapshotTable(stream, 'changes')}`);
}

export async function stageFresh(db: Db, stream: SnapshotStream, fresh: FreshRows): Promise<void> {
  const starts = fresh.ends.map((_, i) => (i === 0 ? 0 : fresh.ends[i - 1]!));
  const bytes = Buffer.from(fresh.bytes.buffer, fresh.bytes.byteOffset, fresh.bytes.byteLength);
  await db.query(`INSERT INTO ${snapshotTable(stream, 'next')} (key, chain, body, raw_hash)
    SELECT k, convert_from(substring($3::bytea FROM s + 1 FOR ${CHAIN_LENGTH}), 'UTF8'), convert_from(substring($3::bytea FROM s + ${CHAIN_LENGTH + 1} FOR e - s - ${CHAIN_LENGTH}), 'UTF8'), h
    FROM unnest($1::bigint[], $2::int[], $4::int[], $5::text[]) AS t(k, s, e, h)`, [fresh.keys, starts, bytes, fresh.ends, fresh.hashes]);
}

export async function stageChanges(db: Db, stream: SnapshotStream, staged: readonly StagedRow[]): Promise<void> {
  await db.query(`INSERT INTO ${snapshotTable(stream, 'changes')} (key, chain, body, raw_hash, change_id, change_json)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])`, [
    staged.map((r) => r.key), staged.map((r) => r.chain), staged.map((r) => r.body), staged.map((r) => r.rawHash),
    staged.map((r) => r.change?.id ?? null), staged.map((r) => r.change?.json ?? null),
  ]);
}

export async function applyFresh(db: Db, stream: SnapshotStream, state: StatePatch, created: { detectedAt: string; connectors: readonly string[] } | undefined): Promise<void> {
  await meta(db, stream, true);
  if ((await size(db, stream)) > 0) throw new Error(`a fresh ${stream} snapshot cannot replace one that holds rows`);
  const table = snapshotTable(stream);
  const next = snapshotTable(stream, 'next');
  const owed = created ? (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${next}`)).rows[0]!.n : 0;
  await db.query(`DROP TABLE ${table}; ALTER TABLE ${next} RENAME TO ${table}; ALTER INDEX ${next}_pkey RENAME TO ${table}_pkey`);
  await db.query(`UPDATE snapshot_meta SET created_detected_at = $1, created_after = NULL, created_owed = $2, created_connectors = $3 WHERE stream = $4`,
    [created && owed > 0 ? created.detectedAt : null, owed, created && owed > 0 ? JSON.stringify(created.connectors) : null, stream]);
  await bumpVersion(db, stream);
  await putState(db, state);
}

export async function createdOwed(db: Db, stream: SnapshotStream): Promise<number> {
  return (await meta(db, stream)).created_owed;
}

export async function enqueueCreated(db: Db, stream: SnapshotStream, limit: number, now: number): Promise<number> {
  const m = await meta(db, stream, true);
  if (m.created_owed === 0 || m.created_detected_at === null) return 0;
  const connectors = JSON.parse(m.created_connectors ?? '[]') as string[];
  const after = m.created_after ?? Number.MIN_SAFE_INTEGER;
  const batch = (await db.query<{ key: number; chain: string }>(`SELECT key, chain FROM ${snapshotTable(stream)} WHERE key > $1 ORDER BY key LIMIT $2`, [after, limit])).rows;
  if (!(await enqueueLazyAll(db, stream, after, limit, batch.length, m.created_detected_at, connectors, now))) {
    await enqueueLazy(db, stream, batch, m.created_detected_at, connectors, now);
  }
  const left = batch.length < limit ? 0 : Math.max(0, m.created_owed - batch.length);
  await db.query('UPDATE snapshot_meta SET created_after = $1, created_owed = $2, created_detected_at = $3, created_connectors = $4 WHERE stream = $5',
    [batch.at(-1)?.key ?? m.created_after, left, left > 0 ? m.created_detected_at : null, left > 0 ? m.created_connectors : null, stream]);
  return left;
}

/**
 * The chunk's created changes in two statements, when every one of them is the head of its key (the
 * usual case: a fresh snapshot's keys have nothing queued); false, with nothing written, otherwise.
 */
async function enqueueLazyAll(db: Db, stream: SnapshotStream, after: number, limit: number, rows: number, detectedAt: string, connectors: readonly string[], now: number): Promise<boolean> {
  const chunk = `SELECT $1 || ':' || key || ':' || chain AS id, key, chain FROM ${snapshotTable(stream)} WHERE key > $2 ORDER BY key LIMIT $3`;
  await db.query('SAVEPOINT created');
  const inserted = await db.query(`INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at)
    SELECT c.connector || ':' || s.id, c.connector, s.id, $1, $1 || ':' || s.key, 'pending', $4, $4
    FROM (${chunk}) s CROSS JOIN unnest($5::text[]) WITH ORDINALITY AS c(connector, n) ORDER BY s.key, c.n ON CONFLICT DO NOTHING`,
  [stream, after, limit, now, connectors]);
  if (inserted.rowCount !== rows * connectors.length) {
    await db.query('ROLLBACK TO SAVEPOINT created');
    return false;
  }
  await db.query(`INSERT INTO outbox_record (id, pending, snapshot_stream, snapshot_key, snapshot_chain, detected_at)
    SELECT id, $4, $1, key, chain, $5 FROM (${chunk}) s ON CONFLICT (id) DO UPDATE SET pending = outbox_record.pending + excluded.pending`,
  [stream, after, limit, connectors.length, detectedAt]);
  await db.query('RELEASE SAVEPOINT created');
  return true;
}

export async function applyChanges(db: Db, stream: SnapshotStream, limit: number, connectors: readonly string[], state: StatePatch, now: number): Promise<{ applied: number; done: boolean }> {
  if ((await meta(db, stream, true)).created_owed > 0) throw new Error(`the created changes of ${stream} must all be enqueued before its snapshot changes`);
  const table = snapshotTable(stream);
  const changes = snapshotTable(stream, 'changes');
  const chunk = (await db.query<{ key: number; change_id: string | null }>(`SELECT key, change_id FROM ${changes} ORDER BY key LIMIT $1`, [limit])).rows;
  if (chunk.length > 0) {
    const keys = chunk.map((r) => r.key);
    await keepCreatedTexts(db, stream, keys);
    await db.query(`INSERT INTO ${table} (key, chain, body, raw_hash) SELECT key, chain, body, raw_hash FROM ${changes} WHERE key = ANY($1::bigint[]) AND body IS NOT NULL
      ON CONFLICT (key) DO UPDATE SET chain = excluded.chain, body = excluded.body, raw_hash = excluded.raw_hash`, [keys]);
    await db.query(`DELETE FROM ${table} WHERE key IN (SELECT key FROM ${changes} WHERE key = ANY($1::bigint[]) AND body IS NULL)`, [keys]);
    await enqueueStaged(db, stream, chunk, connectors, now);
    await db.query(`DELETE FROM ${changes} WHERE key = ANY($1::bigint[])`, [keys]);
  }
  await bumpVersion(db, stream);
  const done = (await db.query(`SELECT 1 FROM ${changes} LIMIT 1`)).rowCount === 0;
  if (done) await putState(db, state);
  return { applied: chunk.length, done };
}

/** The change records of a staged chunk, their JSON copied from the staging table in SQL. */
async function enqueueStaged(db: Db, stream: SnapshotStream, chunk: readonly { key: number; change_id: string | null }[], connectors: readonly string[], now: number): Promise<void> {
  const withChange = chunk.filter((r): r is { key: number; change_id: string } => r.change_id !== null);
  if (withChange.length === 0 || connectors.length === 0) return;
  const deliveries = withChange.flatMap((r) => connectors.map((connector) => ({ id: deliveryId(connector, r.change_id), connector, recordId: r.change_id, stream, orderKey: `${stream}:${r.key}` })));
  const added = await insertDeliveries(db, deliveries, now);
  const stored = withChange.filter((r) => added.has(r.change_id));
  if (stored.length === 0) return;
  await db.query(`INSERT INTO outbox_record (id, body, pending) SELECT c.change_id, c.change_json, t.pending
    FROM unnest($1::bigint[], $2::int[]) AS t(key, pending) JOIN ${snapshotTable(stream, 'changes')} c ON c.key = t.key
    ON CONFLICT (id) DO UPDATE SET pending = outbox_record.pending + excluded.pending`, [stored.map((r) => r.key), stored.map((r) => added.get(r.change_id)!)]);
}
