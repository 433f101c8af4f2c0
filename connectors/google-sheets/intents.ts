/**
 * A record → the row it wants. Change records are keyed by their key (a student's id, a group's…) and
 * invoices by the invoice id, so a tab holds one row per entity; `events` rows are keyed by the record id (one row
 * per event, never updated). Deletions carry no data: a `mark` only touches status and bookkeeping.
 */
import { BridgeError } from '../../src/errors.js';
import type { JsonNumber } from '../../src/json/index.js';
import type { AnyRecord } from '../../src/records.js';
import { toCell, valueAt, type Cell, type ColumnSpec } from './columns.js';
import type { RowIntent } from './plan.js';

/** An invoice id a double cannot hold is a JsonNumber: its text is the key, so two such ids never share a row. */
function rowKey(record: AnyRecord): string | number | JsonNumber {
  if (record.stream === 'events' || record.stream === 'roster') return record.id;
  return record.key ?? record.id;
}

export function toIntent(record: AnyRecord, index: number, columns: readonly ColumnSpec[]): RowIntent | BridgeError {
  if (record.stream === 'roster') throw new Error('roster records are exported, not upserted');
  const op = 'op' in record && record.op === 'deleted' ? 'delete' : 'upsert';
  const data = record.record;
  if (op === 'upsert' && (data === null || data === undefined)) {
    return new BridgeError('sheets.bad_record', `record ${record.id} has no data to write`);
  }
  const key = rowKey(record);
  const at = 'op' in record ? record.detectedAt : record.receivedAt;
  const event = 'event' in record ? record.event : '';
  const cells = columns.map((column): Cell | null => {
    const source = column.source;
    if (source.kind === 'key') return toCell(key);
    if (source.kind === 'field') return op === 'delete' ? null : toCell(valueAt(data, source.path));
    switch (source.name) {
      case 'event': return event;
      case 'status': return op === 'delete' ? 'deleted' : 'active';
      case 'changedAt': return at;
      case 'recordId': return record.id;
    }
  });
  return { index, key: String(key), recordId: record.id, at, op, cells };
}
