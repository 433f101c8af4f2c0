import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Cell } from './columns.js';
import { deleteRanges, indexRows, planUpserts, type ExistingRow, type RowIntent } from './plan.js';

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const intent = (key: string, n: number, op: 'upsert' | 'delete' = 'upsert', index = n): RowIntent =>
  ({ index, key, recordId: `r${key}-${n}`, at: at(n), op, cells: [key, `v${n}`, at(n), `r${key}-${n}`] });
const rowOf = (row: number, i: RowIntent): ExistingRow => ({ row, recordId: i.recordId, at: i.at });

describe('planUpserts', () => {
  it('updates known keys, appends new ones, deletes removed ones (descending)', () => {
    const existing = new Map([['1', rowOf(1, intent('1', 1))], ['2', rowOf(2, intent('2', 2))], ['3', rowOf(3, intent('3', 3))]]);
    const plan = planUpserts([intent('3', 10, 'delete'), intent('1', 11), intent('9', 12), intent('2', 13, 'delete')], existing, 'remove');
    expect(plan.updates.map((u) => u.row)).toEqual([1]);
    expect(plan.appends.map((c) => c[0])).toEqual(['9']);
    expect(plan.deleteRows).toEqual([3, 2]);
  });

  it('skips a record already in its row and a record older than the row', () => {
    const applied = intent('1', 5);
    const existing = new Map([['1', rowOf(1, applied)]]);
    expect(planUpserts([applied, intent('1', 4)], existing, 'remove')).toEqual({ updates: [], appends: [], deleteRows: [], copies: 0 });
  });

  it('writes only the newest change per key, later batch position winning a tie', () => {
    const plan = planUpserts([intent('1', 3, 'upsert', 0), intent('1', 2, 'upsert', 1), { ...intent('1', 3, 'upsert', 2), recordId: 'x' }], new Map(), 'remove');
    expect(plan.appends).toHaveLength(1);
    expect(plan.appends[0]![3]).toBe('r1-3');
    expect(plan.appends[0]).toEqual(intent('1', 3).cells);
  });

  it('marks instead of deleting, and ignores deletes of rows that are not there', () => {
    const existing = new Map([['1', rowOf(4, intent('1', 1))]]);
    const mark = planUpserts([intent('1', 2, 'delete'), intent('7', 3, 'delete')], existing, 'mark');
    expect(mark).toEqual({ updates: [{ row: 4, cells: intent('1', 2).cells }], appends: [], deleteRows: [], copies: 0 });
  });

  it('property: applying a plan, then planning the same batch again, writes nothing', () => {
    const arbIntent = fc.record({ key: fc.integer({ min: 1, max: 6 }).map(String), n: fc.integer({ min: 1, max: 40 }), del: fc.boolean() });
    fc.assert(fc.property(fc.array(arbIntent, { maxLength: 12 }), fc.array(arbIntent, { maxLength: 12 }), fc.constantFrom('remove' as const, 'mark' as const), fc.array(arbIntent, { maxLength: 6 }), (seed, batch, onDelete, rows) => {
      // Rows as a write could leave them, a key's twice among them.
      const sheet: Cell[][] = [['id', 'v', 'at', 'rid'], ...rows.map((x) => intent(x.key, x.n).cells as Cell[])];
      const apply = (intents: RowIntent[]) => {
        const existing = indexRows(sheet.map((r) => [r[0]!]), sheet.map((r) => [r[3]!]), sheet.map((r) => [r[2]!]));
        const plan = planUpserts(intents, existing, onDelete);
        for (const u of plan.updates) sheet[u.row] = u.cells.map((c, i) => c ?? sheet[u.row]![i]!);
        sheet.push(...plan.appends.map((cells) => cells.map((c) => c ?? '')));
        for (const row of plan.deleteRows) sheet.splice(row, 1);
        return plan;
      };
      const toIntents = (xs: typeof seed) => xs.map((x, i) => intent(x.key, x.n, x.del ? 'delete' : 'upsert', i));
      apply(toIntents(seed));
      apply(toIntents(batch));
      const again = apply(toIntents(batch));
      expect(again).toEqual({ updates: [], appends: [], deleteRows: [], copies: 0 });
      const keys = sheet.slice(1).map((r) => r[0]);
      expect(new Set(keys).size).toBe(keys.length);
    }));
  });
});

describe('indexRows and deleteRanges', () => {
  it('maps keys to their first row, skipping the header and blank ids', () => {
    const rows = indexRows([['id'], [1], [], [' 2 '], [1]], [['rid'], ['a'], [], ['b'], ['c']], [['at'], ['t1'], [], ['t2'], ['t3']]);
    expect([...rows]).toEqual([['1', { row: 1, recordId: 'a', at: 't1', copies: [4] }], ['2', { row: 3, recordId: 'b', at: 't2' }]]);
  });

  it('keeps the row of a key\'s newest change and plans its copies away, named in the batch or not', () => {
    // Key 1: a late copy of its row (row 3); key 2: an older row first (row 2), its newest last (row 4).
    const rows = indexRows([['id'], [1], [2], [1], [2]], [['rid'], ['a'], ['b1'], ['a'], ['b2']], [['at'], [at(1)], [at(1)], [at(1)], [at(2)]]);
    expect([...rows]).toEqual([['1', { row: 1, recordId: 'a', at: at(1), copies: [3] }], ['2', { row: 4, recordId: 'b2', at: at(2), copies: [2] }]]);
    const plan = planUpserts([intent('2', 5)], rows, 'remove');
    expect(plan).toEqual({ updates: [{ row: 4, cells: intent('2', 5).cells }], appends: [], deleteRows: [3, 2], copies: 2 });
  });

  it('merges adjacent rows into descending ranges', () => {
    expect(deleteRanges([9, 8, 7, 5, 2, 1])).toEqual([{ start: 7, end: 10 }, { start: 5, end: 6 }, { start: 1, end: 3 }]);
  });
});
