import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deletedItem, diffRecords, mapSnapshot, missingKeys, type DiffItem, type PolledRecord } from './diff.js';
import { createStreamScan, type StreamScan } from './stream-scan.js';

const ctx = { stream: 'users' as const, detectedAt: '2026-11-22T10:00:00.000Z' };

const user = (id: number, lastName: string): PolledRecord => ({ id, lastName, isArchived: 0, additionalData: { city: 'Łódź' }, parentUser: null });

/** The snapshot after taking a list once (emit): key → stored entry. */
function snapshotOf(records: readonly PolledRecord[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const item of diffRecords(ctx, mapSnapshot(new Map()), records)) if (item.stored !== null) map.set(item.key, item.stored);
  return map;
}

/** A record as the list worker hands it over: its key and its text. */
const take = (scan: StreamScan, record: PolledRecord) => scan.parsed([String(record.id), JSON.stringify(record)]);

/** What the cycle does with a scan: its items, then the deletions it finds from the keys it saw. */
function scanned(snapshot: Map<string, string>, records: readonly PolledRecord[], initial?: 'emit' | 'baseline'): DiffItem[] {
  const scan = createStreamScan({ ...ctx, initial }, mapSnapshot(snapshot));
  for (const record of records) take(scan, record);
  const deletions = missingKeys(mapSnapshot(snapshot), scan.present).map((key) => deletedItem({ ...ctx, initial }, key, snapshot.get(key) as string));
  return [...scan.items(), ...deletions];
}

describe('createStreamScan', () => {
  it('keeps only what changed, and counts every record', () => {
    const before = [user(1, 'A'), user(2, 'B'), user(3, 'C')];
    const scan = createStreamScan(ctx, mapSnapshot(snapshotOf(before)));
    for (const record of [user(1, 'A'), user(2, 'Bis'), user(4, 'D')]) take(scan, record);
    expect(scan.fetched).toBe(3);
    expect(scan.items().map((item) => [item.key, item.change?.op])).toEqual([['2', 'updated'], ['4', 'created']]);
    expect([...scan.present]).toEqual(['1', '2', '4']);
    expect(scan.kept()).toBeUndefined();
  });

  it('counts keys the worker knew by their bytes without diffing them, and flags one the snapshot lacks', () => {
    const snapshot = mapSnapshot(snapshotOf([user(1, 'A'), user(2, 'B'), user(3, 'C')]));
    const scan = createStreamScan(ctx, snapshot);
    scan.known(['1', '3']);
    take(scan, user(2, 'Bis'));
    expect(scan.fetched).toBe(3);
    expect([...scan.present]).toEqual(['1', '3', '2']);
    expect(scan.items().map((item) => [item.key, item.change?.op])).toEqual([['2', 'updated']]);
    expect(scan.stale).toBeUndefined();
    scan.known(['1']); // the same key twice: a duplicate id
    expect(scan.duplicate).toBe('1');

    const stale = createStreamScan(ctx, snapshot);
    stale.known(['1', '9', '8']);
    expect(stale.stale).toBe('9');
  });

  it('sorts its items by id when the list arrives out of order, and keeps the records when asked', () => {
    const scan = createStreamScan(ctx, mapSnapshot(new Map()), true);
    for (const id of [10, 2, 33, 4]) take(scan, user(id, 'X'));
    expect(scan.items().map((item) => item.key)).toEqual(['2', '4', '10', '33']);
    expect(scan.kept()?.map((record) => record.id)).toEqual([10, 2, 33, 4]);
  });

  it('names the first duplicate id and still counts the records after it', () => {
    const scan = createStreamScan(ctx, mapSnapshot(new Map()));
    for (const id of [1, 2, 1, 3, 2]) take(scan, user(id, 'X'));
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
