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
