import type { Key, SnapshotRow } from './port.js';

/** A `snapshot_<stream>` row as both engines read it back (sqlite/snapshot.ts, postgres/snapshot.ts). */
export interface SnapshotDbRow {
  key: Key;
  chain: string;
  body: string;
  raw_hash: string | null;
}

export const toRow = (row: SnapshotDbRow): SnapshotRow => ({ key: row.key, chain: row.chain, body: row.body, rawHash: row.raw_hash });
