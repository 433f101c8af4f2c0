/**
 * The upsert decision for one tab, as a pure function: given what the batch wants and what the id,
 * record-id and changed-at columns say now, which rows to update, append and delete.
 *
 * Idempotency: a row whose `record id` is the record's id already holds it (re-applying writes
 * nothing). Ordering: a record older than the row's `changed at` is stale (a retried old change must
 * not undo a newer one). Within a batch only the newest change per key is written.
 */
import type { Cell } from './columns.js';

export interface RowIntent {
  /** Position in the delivered batch (ties in `at` go to the later one). */
  index: number;
  key: string;
  recordId: string;
  /** ISO 8601 time of the change. */
  at: string;
  op: 'upsert' | 'delete';
  /** Cells in tab-column order; `null` leaves a cell as it is (a `mark` keeps the last data). */
  cells: (Cell | null)[];
}

export interface ExistingRow {
  /** 0-based grid row. */
  row: number;
  recordId: string;
  at: string;
  /**
   * Other rows of the same key (0-based), none newer than `row`: copies that a write left behind,
   * an append that timed out here and still landed at Google before it was retried.
   */
  copies?: number[];
}

export interface UpsertPlan {
  updates: { row: number; cells: (Cell | null)[] }[];
  appends: (Cell | null)[][];
  /** 0-based rows, descending, so deleting one never shifts the next. */
  deleteRows: number[];
  /** How many of `deleteRows` are copies of a key's row (ExistingRow.copies). */
  copies: number;
}

const time = (iso: string) => {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
};

/**
 * Reads the three bookkeeping columns (row 0 is the header) into key → the row holding its newest
 * change (the first of them on a tie), the key's other rows as its copies.
 */
export function indexRows(keys: readonly (readonly Cell[])[], recordIds: readonly (readonly Cell[])[], ats: readonly (readonly Cell[])[]): Map<string, ExistingRow> {
  const rows = new Map<string, ExistingRow>();
  for (let row = 1; row < keys.length; row++) {
    const key = String(keys[row]?.[0] ?? '').trim();
    if (key === '') continue;
    const found: ExistingRow = { row, recordId: String(recordIds[row]?.[0] ?? ''), at: String(ats[row]?.[0] ?? '') };
    const seen = rows.get(key);
    if (!seen) rows.set(key, found);
    else if (time(found.at) > time(seen.at)) rows.set(key, { ...found, copies: [...(seen.copies ?? []), seen.row] });
    else (seen.copies ??= []).push(row);
  }
  return rows;
}

function newest(intents: RowIntent[], existing: ExistingRow | undefined): RowIntent | undefined {
  let best: RowIntent | undefined;
  for (const intent of intents) {
    if (existing && existing.recordId === intent.recordId) continue;
    if (existing && time(existing.at) > time(intent.at)) continue;
    if (existing && intents.some((o) => o.recordId === existing.recordId && time(o.at) > time(intent.at))) continue;
    if (!best || time(intent.at) > time(best.at) || (time(intent.at) === time(best.at) && intent.index > best.index)) best = intent;
  }
  return best;
}

export function planUpserts(intents: readonly RowIntent[], existing: ReadonlyMap<string, ExistingRow>, onDelete: 'remove' | 'mark'): UpsertPlan {
  const byKey = new Map<string, RowIntent[]>();
  for (const intent of intents) {
    const list = byKey.get(intent.key);
    if (list) list.push(intent);
    else byKey.set(intent.key, [intent]);
  }
  const plan: UpsertPlan = { updates: [], appends: [], deleteRows: [], copies: 0 };
  // A key's copies go whether or not the batch names it: left, each would show a stale duplicate.
  for (const row of existing.values()) {
    for (const copy of row.copies ?? []) plan.deleteRows.push(copy);
    plan.copies += row.copies?.length ?? 0;
  }
  for (const [key, list] of byKey) {
    const row = existing.get(key);
    const winner = newest(list, row);
    if (!winner) continue;
    if (winner.op === 'upsert') {
      if (row) plan.updates.push({ row: row.row, cells: winner.cells });
      else plan.appends.push(winner.cells);
    } else if (row && onDelete === 'remove') {
      plan.deleteRows.push(row.row);
    } else if (row) {
      plan.updates.push({ row: row.row, cells: winner.cells });
    }
  }
  plan.updates.sort((a, b) => a.row - b.row);
  plan.deleteRows.sort((a, b) => b - a);
  return plan;
}

/** Descending rows → descending half-open ranges of adjacent rows, one deleteDimension each. */
export function deleteRanges(rowsDescending: readonly number[]): { start: number; end: number }[] {
  const ranges: { start: number; end: number }[] = [];
  for (const row of rowsDescending) {
    const last = ranges[ranges.length - 1];
    if (last && last.start === row + 1) last.start = row;
    else ranges.push({ start: row, end: row + 1 });
  }
  return ranges;
}
