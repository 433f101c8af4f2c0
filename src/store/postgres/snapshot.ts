import type { FreshRows, Key, SnapshotIndex, SnapshotRow, SnapshotStream, StagedRow, StatePatch } from '../port.js';
import { CHAIN_LENGTH, deliveryId, keyTypeOf, snapshotTable } from '../tables.js';
import { BridgeError } from '../../errors.js';
import { toRow, type SnapshotDbRow as Row } from '../snapshot-rows.js';
import type { Db } from './db.js';
import { insertDeliveries, keepCreatedTexts } from './enqueue.js';
import { followPeople } from './people-follow.js';
import { createRanges, createdPending } from './ranges.js';
import { putState } from './state.js';
import { keyColumn, keyFloor, keySql } from './stream-tables.js';

/**
 * The poll snapshot on PostgreSQL: the layout of the SQLite one (sqlite/snapshot.ts). A fresh
 * snapshot's rows arrive as the list worker's bytes in one bytea and are split in SQL, so neither
 * side escapes 300,000 JSON texts into an array literal.
 */
/** The stream's row count, kept in `snapshot_meta` by every apply: count(*) reads the whole table. */
export async function size(db: Db, stream: SnapshotStream): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT rows AS n FROM snapshot_meta WHERE stream = $1', [stream]);
  return rows[0]!.n;
}

export async function version(db: Db, stream: SnapshotStream): Promise<number> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM snapshot_meta WHERE stream = $1', [stream]);
  return rows[0]?.version ?? 0;
}

/**
 * Locks the stream's meta row (one writer of a stream's snapshot at a time) and checks that the
 * staging is still the caller's: every cycle's `begin` takes a new fence, so a cycle that lost its
 * turn (its connection, and with it its staging lock, went away and another cycle began) is refused
 * rather than apply or stage over the newer one. `share` lets stagings of one cycle overlap.
 */
async function lockStream(db: Db, stream: SnapshotStream, fence: number, mode: 'update' | 'share' = 'update'): Promise<void> {
  const { rows } = await db.query<{ stage_fence: number }>(
    mode === 'update' ? 'SELECT stage_fence FROM snapshot_meta WHERE stream = $1 FOR UPDATE' : 'SELECT stage_fence FROM snapshot_meta WHERE stream = $1 FOR SHARE', [stream]);
  if (rows[0]?.stage_fence !== fence) {
    throw new BridgeError('poll.fenced', `another poll cycle has taken over the ${stream} snapshot since this one began; this one stops without applying anything more`);
  }
}

/** A new version of the stream's rows, `delta` rows more (or fewer) than before; resolves with it. */
async function bumpVersion(db: Db, stream: SnapshotStream, delta: number): Promise<number> {
  const { rows } = await db.query<{ version: number }>('UPDATE snapshot_meta SET version = version + 1, rows = rows + $2 WHERE stream = $1 RETURNING version', [stream, delta]);
  return Number(rows[0]!.version);
}

/**
 * The index packed by the server, in one row: integer keys as their 8 bytes each, string keys as one
 * JSON text, the hashes as one text. Read as a row per key, the client made an object of each on
 * the daemon's thread, in one stretch that held webhooks up for as long.
 */
export async function index(db: Db, stream: SnapshotStream): Promise<SnapshotIndex> {
  const table = snapshotTable(stream);
  const integer = keyTypeOf(stream) === 'integer';
  const keys = integer ? `coalesce(string_agg(int8send(key), ''::bytea ORDER BY key), ''::bytea)` : `coalesce(json_agg(key ORDER BY key), '[]'::json)::text`;
  const { rows } = await db.query<{ keys: Buffer | string; hashes: string }>(
    `SELECT ${keys} AS keys, coalesce(string_agg(coalesce(raw_hash, '') || E'\n', '' ORDER BY key), '') AS hashes FROM ${table}`);
  const { keys: packed, hashes } = rows[0]!;
  return { version: await version(db, stream), keys: integer ? int8Keys(packed as Buffer) : (JSON.parse(packed as string) as string[]), hashes };
}

/** Keys sent as int8send's bytes (big-endian), as numbers: every key is a safe integer (streams/key.ts). */
function int8Keys(bytes: Buffer): Float64Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const keys = new Float64Array(bytes.byteLength / 8);
  for (let i = 0; i < keys.length; i++) keys[i] = Number(view.getBigInt64(i * 8));
  return keys;
}

export async function rows(db: Db, stream: SnapshotStream, keys: readonly Key[]): Promise<SnapshotRow[]> {
  const result = await db.query<Row>(`SELECT * FROM ${snapshotTable(stream)} WHERE key = ANY($1::${keySql(stream)}[]) ORDER BY key`, [keys]);
  return result.rows.map(toRow);
}

/** The chains deleted keys left, by key text (port-snapshot.ts, `gone`). */
export async function gone(db: Db, stream: SnapshotStream, keys: readonly Key[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ key: string; chain: string }>('SELECT key, chain FROM snapshot_gone WHERE stream = $1 AND key = ANY($2::text[])', [stream, keys.map(String)]);
  return new Map(rows.map((r) => [r.key, r.chain]));
}

export async function scan(db: Db, stream: SnapshotStream, after: Key | undefined, limit: number): Promise<SnapshotRow[]> {
  const result = await db.query<Row>(`SELECT * FROM ${snapshotTable(stream)} WHERE key > $1 ORDER BY key LIMIT $2`, [after ?? keyFloor(stream), limit]);
  return result.rows.map(toRow);
}

/** Drops what an earlier cycle left staged and creates the staging table; resolves with this cycle's fence. */
export async function begin(db: Db, stream: SnapshotStream, kind: 'fresh' | 'changes'): Promise<number> {
  const { rows } = await db.query<{ stage_fence: number }>('UPDATE snapshot_meta SET stage_fence = stage_fence + 1 WHERE stream = $1 RETURNING stage_fence', [stream]);
  await dropStaging(db, stream);
  await db.query(kind === 'fresh'
    ? `CREATE TABLE ${snapshotTable(stream, 'next')} (key ${keyColumn(stream)} PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text)`
    // Scratch: a crash loses it and the next cycle finds the same changes again, so no WAL for it.
    : `CREATE UNLOGGED TABLE ${snapshotTable(stream, 'changes')} (key ${keyColumn(stream)} PRIMARY KEY, chain text NOT NULL, body text, raw_hash text, change_id text, change_json text)`);
  return rows[0]!.stage_fence;
}

/** Drops what the cycle with this fence staged; what a newer cycle stages is left alone. */
export async function discard(db: Db, stream: SnapshotStream, fence: number): Promise<void> {
  const { rows } = await db.query<{ stage_fence: number }>('SELECT stage_fence FROM snapshot_meta WHERE stream = $1 FOR UPDATE', [stream]);
  if (rows[0]?.stage_fence === fence) await dropStaging(db, stream);
}

async function dropStaging(db: Db, stream: SnapshotStream): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${snapshotTable(stream, 'next')}; DROP TABLE IF EXISTS ${snapshotTable(stream, 'changes')}`);
}

export async function stageFresh(db: Db, stream: SnapshotStream, fence: number, fresh: FreshRows): Promise<void> {
  await lockStream(db, stream, fence, 'share');
  const starts = fresh.ends.map((_, i) => (i === 0 ? 0 : fresh.ends[i - 1]!));
  const bytes = Buffer.from(fresh.bytes.buffer, fresh.bytes.byteOffset, fresh.bytes.byteLength);
  await db.query(`INSERT INTO ${snapshotTable(stream, 'next')} (key, chain, body, raw_hash)
    SELECT k, convert_from(substring($3::bytea FROM s + 1 FOR ${CHAIN_LENGTH}), 'UTF8'), convert_from(substring($3::bytea FROM s + ${CHAIN_LENGTH + 1} FOR e - s - ${CHAIN_LENGTH}), 'UTF8'), h
    FROM unnest($1::${keySql(stream)}[], $2::int[], $4::int[], $5::text[]) AS t(k, s, e, h)`, [fresh.keys, starts, bytes, fresh.ends, fresh.hashes]);
}

export async function stageChanges(db: Db, stream: SnapshotStream, fence: number, staged: readonly StagedRow[]): Promise<void> {
  await lockStream(db, stream, fence, 'share');
  // One JSON document, not text arrays: the client escapes an array literal element by element on
  // the event loop, which for a big batch holds webhook acknowledgements up; JSON.stringify does it
  // natively, and PostgreSQL unpacks it.
  const rows = staged.map((r) => ({ key: r.key, chain: r.chain, body: r.body, raw_hash: r.rawHash, change_id: r.change?.id ?? null, change_json: r.change?.json ?? null }));
  await db.query(`INSERT INTO ${snapshotTable(stream, 'changes')} (key, chain, body, raw_hash, change_id, change_json)
    SELECT key, chain, body, raw_hash, change_id, change_json
    FROM json_to_recordset($1::json) AS t(key ${keySql(stream)}, chain text, body text, raw_hash text, change_id text, change_json text)`, [JSON.stringify(rows)]);
}

/**
 * Vacuums a fresh snapshot's staged table before it is swapped in: once, in a session of ours, it
 * marks every row committed and every page all-visible. Otherwise the first statement to read each
 * row (the list worker's index) would rewrite every page to note the rows committed, and autovacuum
 * would rewrite them all again a minute later, each time hundreds of megabytes left for the kernel
 * to write out at once (docs/store.md, section "PostgreSQL and the disk"). Outside a transaction, as
 * VACUUM must be; the staging lock keeps the table this cycle's meanwhile.
 */
export async function vacuumStaged(db: Db, stream: SnapshotStream): Promise<void> {
  try {
    await db.query(`VACUUM (ANALYZE) ${snapshotTable(stream, 'next')}`);
  } catch (error) {
    // No staged table (undefined_table): another cycle took the stream over and swapped its own in.
    // The apply that follows checks the fence and refuses as `poll.fenced`, which says what happened.
    if ((error as { code?: unknown }).code !== UNDEFINED_TABLE) throw error;
  }
}

const UNDEFINED_TABLE = '42P01';

export async function applyFresh(db: Db, stream: SnapshotStream, fence: number, state: StatePatch, created: { detectedAt: string; connectors: readonly string[]; now: number } | undefined): Promise<void> {
  await lockStream(db, stream, fence);
  if ((await size(db, stream)) > 0) throw new Error(`a fresh ${stream} snapshot cannot replace one that holds rows`);
  const table = snapshotTable(stream);
  const next = snapshotTable(stream, 'next');
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${next}`);
  await db.query(`DROP TABLE ${table}; ALTER TABLE ${next} RENAME TO ${table}; ALTER INDEX ${next}_pkey RENAME TO ${table}_pkey`);
  if (created) await createRanges(db, stream, created.detectedAt, created.connectors, created.now);
  await bumpVersion(db, stream, rows[0]!.n);
  await putState(db, state);
}

export async function applyChanges(db: Db, stream: SnapshotStream, fence: number, limit: number, connectors: readonly string[], state: StatePatch, now: number): Promise<{ applied: number; done: boolean }> {
  await lockStream(db, stream, fence);
  if ((await createdPending(db, stream)) > 0) throw new Error(`the created changes of ${stream} must all have rows of their own before its snapshot changes`);
  const table = snapshotTable(stream);
  const changes = snapshotTable(stream, 'changes');
  const chunk = (await db.query<{ key: Key; change_id: string | null }>(`SELECT key, change_id FROM ${changes} ORDER BY key LIMIT $1`, [limit])).rows;
  const keysParam = `$1::${keySql(stream)}[]`;
  let delta = 0;
  if (chunk.length > 0) {
    const chunkKeys = chunk.map((r) => r.key);
    await keepCreatedTexts(db, stream, chunkKeys);
    // xmax = 0 on a returned row: it was inserted, not updated.
    const put = await db.query<{ inserted: boolean }>(`INSERT INTO ${table} (key, chain, body, raw_hash) SELECT key, chain, body, raw_hash FROM ${changes} WHERE key = ANY(${keysParam}) AND body IS NOT NULL
      ON CONFLICT (key) DO UPDATE SET chain = excluded.chain, body = excluded.body, raw_hash = excluded.raw_hash RETURNING (xmax = 0) AS inserted`, [chunkKeys]);
    const del = await db.query(`DELETE FROM ${table} WHERE key IN (SELECT key FROM ${changes} WHERE key = ANY(${keysParam}) AND body IS NULL)`, [chunkKeys]);
    // Each deletion's chain stays with its key, for a later re-creation to start from.
    await db.query(`INSERT INTO snapshot_gone (stream, key, chain) SELECT $2, key::text, chain FROM ${changes} WHERE key = ANY(${keysParam}) AND body IS NULL AND chain <> ''
      ON CONFLICT (stream, key) DO UPDATE SET chain = excluded.chain`, [chunkKeys, stream]);
    delta = put.rows.filter((r) => r.inserted).length - (del.rowCount ?? 0);
    await enqueueStaged(db, stream, chunk, connectors, now);
    await db.query(`DELETE FROM ${changes} WHERE key = ANY(${keysParam})`, [chunkKeys]);
  }
  await followPeople(db, stream, await bumpVersion(db, stream, delta), chunk.map((r) => r.key));
  const done = (await db.query(`SELECT 1 FROM ${changes} LIMIT 1`)).rowCount === 0;
  if (done) await putState(db, state);
  return { applied: chunk.length, done };
}

/** The change records of a staged chunk, their JSON copied from the staging table in SQL. */
async function enqueueStaged(db: Db, stream: SnapshotStream, chunk: readonly { key: Key; change_id: string | null }[], connectors: readonly string[], now: number): Promise<void> {
  const withChange = chunk.filter((r): r is { key: Key; change_id: string } => r.change_id !== null);
  if (withChange.length === 0 || connectors.length === 0) return;
  const deliveries = withChange.flatMap((r) => connectors.map((connector) => ({ id: deliveryId(connector, r.change_id), connector, recordId: r.change_id, stream, orderKey: `${stream}:${r.key}` })));
  const added = await insertDeliveries(db, deliveries, now);
  const stored = withChange.filter((r) => added.has(r.change_id));
  if (stored.length === 0) return;
  await db.query(`INSERT INTO outbox_record (id, body, pending) SELECT c.change_id, c.change_json, t.pending
    FROM unnest($1::${keySql(stream)}[], $2::int[]) AS t(key, pending) JOIN ${snapshotTable(stream, 'changes')} c ON c.key = t.key
    ON CONFLICT (id) DO UPDATE SET pending = outbox_record.pending + excluded.pending`, [stored.map((r) => r.key), stored.map((r) => added.get(r.change_id)!)]);
}
