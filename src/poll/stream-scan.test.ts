import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deletedItem, diffRecords, mapSnapshot, missingKeys, type DiffItem, type PolledRecord } from './diff.js';
import { createStreamScan } from './stream-scan.js';

const ctx = { stream: 'users' as const, detectedAt: '2026-11-22T10:00:00.000Z' };

const user = (id: number, lastName: string): PolledRecord => ({ id, lastName, isArchived: 0, additionalData: { city: 'Łódź' }, parentUser: null });

/** The snapshot after taking a list once (emit): key → stored entry. */
function snapshotOf(records: readonly PolledRecord[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const item of diffRecords(ctx, mapSnapshot(new Map()), records)) if (item.stored !== null) map.set(item.key, item.stored);
  return map;
}

/** What the cycle does with a scan: its items, then the deletions it finds from the keys it saw. */
function scanned(snapshot: Map<string, string>, records: readonly PolledRecord[], initial?: 'emit' | 'baseline'): DiffItem[] {
  const scan = createStreamScan({ ...ctx, initial }, mapSnapshot(snapshot));
  for (const record of records) scan.take(record);
  const deletions = missingKeys(mapSnapshot(snapshot), scan.present).map((key) => deletedItem({ ...ctx, initial }, key, snapshot.get(key) as string));
  return [...scan.items(), ...deletions];
}

describe('createStreamScan', () => {
  it('keeps only what changed, and counts every record', () => {
    const before = [user(1, 'A'), user(2, 'B'), user(3, 'C')];
    const scan = createStreamScan(ctx, mapSnapshot(snapshotOf(before)));
    for (const record of [user(1, 'A'), user(2, 'Bis'), user(4, 'D')]) scan.take(record);
    expect(scan.fetched).toBe(3);
    expect(scan.items().map((item) => [item.key, item.change?.op])).toEqual([['2', 'updated'], ['4', 'created']]);
    expect([...scan.present]).toEqual(['1', '2', '4']);
    expect(scan.kept()).toBeUndefined();
  });

  it('takes records whose raw bytes the last cycle indexed without a diff, and declines the rest', () => {
    const before = [user(1, 'A'), user(2, 'B'), user(3, 'C')];
    const snapshot = mapSnapshot(snapshotOf(before));
    const raw = (record: PolledRecord) => Buffer.from(` ${JSON.stringify(record)}`); // bytes as sent, not as stored
    const first = createStreamScan(ctx, snapshot);
    for (const record of before) {
      expect(first.known(raw(record))).toBe(false); // no index yet: everything is parsed
      first.take(record);
    }
    expect([...first.rawIndex().values()]).toEqual(['1', '2', '3']);

    const second = createStreamScan(ctx, snapshot, false, first.rawIndex());
    expect(second.known(raw(user(1, 'A')))).toBe(true);
    expect(second.known(raw(user(2, 'Bis')))).toBe(false);
    second.take(user(2, 'Bis'));
    expect(second.known(raw(user(1, 'A')))).toBe(true); // the same bytes twice: a duplicate id
    expect(second.duplicate).toBe('1');
    expect(second.fetched).toBe(3);
    expect(second.items().map((item) => [item.key, item.change?.op])).toEqual([['2', 'updated']]);

    // Indexed bytes of a key the snapshot no longer holds, or a scan that keeps records: parsed.
    expect(createStreamScan(ctx, mapSnapshot(new Map()), false, first.rawIndex()).known(raw(user(1, 'A')))).toBe(false);
    expect(createStreamScan(ctx, snapshot, true, first.rawIndex()).known(raw(user(1, 'A')))).toBe(false);
  });

  it('sorts its items by id when the list arrives out of order, and keeps the records when asked', () => {
    const scan = createStreamScan(ctx, mapSnapshot(new Map()), true);
    for (const id of [10, 2, 33, 4]) scan.take(user(id, 'X'));
    expect(scan.items().map((item) => item.key)).toEqual(['2', '4', '10', '33']);
    expect(scan.kept()?.map((record) => record.id)).toEqual([10, 2, 33, 4]);
  });

  it('names the first duplicate id and still counts the records after it', () => {
    const scan = createStreamScan(ctx, mapSnapshot(new Map()));
    for (const id of [1, 2, 1, 3, 2]) scan.take(user(id, 'X'));
    expect(scan.duplicate).toBe('1');
    expect(scan.fetched).toBe(5);
  });
});

const record = fc
  .tuple(fc.integer({ min: 1, max: 15 }), fc.constantFrom('A', 'B', 'Łódź'), fc.constantFrom(0, 1, '1'))
  .map(([id, lastName, isArchived]): PolledRecord => ({ id, lastName, isArchived }));
const list = fc.uniqueArray(record, { selector: (r) => r.id, maxLength: 10 });

describe('createStreamScan (properties)', () => {
  it('fed in any order, gives exactly what diffRecords gives on the whole list (same items, same ids)', () => {
    fc.assert(
      fc.property(list, list.chain((l) => fc.shuffledSubarray(l, { minLength: l.length }).map((s) => [l, s] as const)), fc.constantFrom('emit' as const, 'baseline' as const, undefined),
        (previous, [current, shuffled], initial) => {
          const snapshot = snapshotOf(previous);
          expect(scanned(snapshot, shuffled, initial)).toEqual(diffRecords({ ...ctx, initial }, mapSnapshot(snapshot), current));
        }),
    );
  });
});
