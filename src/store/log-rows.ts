import type { Stream } from '../records.js';

/** A record of the delivery log a connector still owes, as each engine reads it (sqlite/log.ts, postgres/log.ts). */
export interface OwedRow {
  connector: string;
  part: number;
  seq: number;
  record_id: string;
  stream: Stream;
  order_key: string;
  enqueued_at: number;
}

/** The log's order of owed records and deliveries: by number, then connector (one record, several connectors). */
export const byLogOrder = (a: { seq: number; connector: string }, b: { seq: number; connector: string }): number =>
  a.seq - b.seq || (a.connector < b.connector ? -1 : a.connector > b.connector ? 1 : 0);
