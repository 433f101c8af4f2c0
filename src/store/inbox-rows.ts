import type { InboxEntry } from './port.js';

/** An `inbox` row as both engines read it back (sqlite/inbox.ts, postgres/inbox.ts). */
export interface InboxRow {
  id: string;
  event: string;
  received_at: string;
  received_at_ms: number;
  body: string;
  record_ids: string;
  reprocessed: number;
}

export const toEntry = (row: InboxRow): InboxEntry => ({
  id: row.id, event: row.event, receivedAt: row.received_at, receivedAtMs: row.received_at_ms,
  body: row.body, recordIds: JSON.parse(row.record_ids) as string[], reprocessed: row.reprocessed,
});
