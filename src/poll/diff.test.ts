import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';
import { diffRecord, diffRecords, findDuplicateKey, mapSnapshot, sortByKey, type DiffItem, type PolledRecord } from './diff.js';
import { applyFieldChanges } from './leaf-changes.js';
import { BASELINE_CHAIN, decodeEntry } from './snapshot.js';

const ctx = { stream: 'students' as const, detectedAt: '2026-11-22T10:00:00.000Z' };

/** The snapshot after a diff: its entries with the items' entries applied. */
function applyItems(snapshot: ReadonlyMap<string, string>, items: readonly DiffItem[]): Map<string, string> {
  const next = new Map(snapshot);
  for (const item of items) {
    if (item.stored === null) next.delete(item.key);
    else next.set(item.key, item.stored);
  }
  return next;
}

function snapshotOf(records: readonly PolledRecord[]): Map<string, string> {
  return applyItems(new Map(), diffRecords(ctx, mapSnapshot(new Map()), records));
}

/** Applies change records to a list the way a connector would: by key. */
function applyChanges(previous: readonly PolledRecord[], items: readonly DiffItem[]): Map<unknown, unknown> {
  const byId = new Map<unknown, unknown>(previous.map((r) => [r.id, r]));
  for (const { change } of items) {
    if (!change) continue;
    if (change.op === 'deleted') byId.delete(change.key);
    else if (change.op === 'created') byId.set(change.key, change.record);
    else byId.set(change.key, applyFieldChanges(byId.get(change.key), change.changes));
  }
  return byId;
}

const canonicalById = (records: Iterable<[unknown, unknown]>) =>
  [...records].map(([id, value]) => [id as number, canonicalJson(value)] as const).sort((a, b) => a[0] - b[0]);

const student = (id: number, lastName: string, extra: Record<string, unknown> = {}): PolledRecord => ({
  id, isActive: 1, user: { id: id + 1000, lastName, isArchived: 0, additionalData: { city: 'Kraków', email: null }, parentUser: null }, ...extra,
});

describe('diffRecord (table)', () => {
  const base = student(1, 'Kowalska');
  const stored = snapshotOf([base]).get('1') as string;
  const cases: { name: string; current: PolledRecord; changes: { path: string; from?: unknown; to?: unknown }[] }[] = [
    { name: 'rename', current: student(1, 'Nowak'), changes: [{ path: 'user.lastName', from: 'Kowalska', to: 'Nowak' }] },
    {
      name: 'archive',
      current: { ...base, user: { ...(base.user as object), isArchived: 1 } },
      changes: [{ path: 'user.isArchived', from: 0, to: 1 }],
    },
    {
      name: 'nested city',
      current: student(1, 'Kowalska', { user: { ...(base.user as object), additionalData: { city: 'Łódź', email: null } } }),
      changes: [{ path: 'user.additionalData.city', from: 'Kraków', to: 'Łódź' }],
    },
    {
      name: 'parent appears (object replaces null: one change carrying the object)',
      current: student(1, 'Kowalska', { user: { ...(base.user as object), parentUser: { id: 7 } } }),
      changes: [{ path: 'user.parentUser', from: null, to: { id: 7 } }],
    },
    { name: 'field appears', current: { ...base, tag: 'x' }, changes: [{ path: 'tag', to: 'x' }] },
    { name: 'field vanishes', current: { id: 1, user: base.user }, changes: [{ path: 'isActive', from: 1 }] },
    { name: 'array is a leaf', current: { ...base, tags: [1, 2] }, changes: [{ path: 'tags', to: [1, 2] }] },
  ];
  for (const { name, current, changes } of cases) {
    it(name, () => {
      const item = diffRecord(ctx, current, stored);
      expect(item?.change?.op).toBe('updated');
      expect(item?.change?.changes).toEqual(changes);
      expect(item?.change?.previous).toEqual(base);
      expect(item?.change?.record).toEqual(current);
      expect(item?.change?.id).toMatch(/^students:1:[0-9a-f]{12}$/);
    });
  }

  it('an identical record is nothing; the same content with keys in another order is rewritten, not reported', () => {
    expect(diffRecord(ctx, student(1, 'Kowalska'), stored)).toBeUndefined();
    const reordered = { user: base.user, isActive: 1, id: 1 };
    const item = diffRecord(ctx, reordered, stored);
    expect(item?.change).toBeUndefined();
    expect(decodeEntry(item?.stored as string)).toEqual({ chain: decodeEntry(stored).chain, json: JSON.stringify(reordered) });
  });

  it('created and deleted', () => {
    const created = diffRecords(ctx, mapSnapshot(new Map()), [base]);
    expect(created.map((i) => [i.change?.op, i.change?.previous, i.change?.changes])).toEqual([['created', null, []]]);
    const deleted = diffRecords(ctx, mapSnapshot(snapshotOf([base])), []);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]?.change).toMatchObject({ op: 'deleted', key: 1, record: null, previous: base });
    expect(deleted[0]?.stored).toBeNull();
  });

  it('baseline records silently and later changes are reported', () => {
    const items = diffRecords({ ...ctx, initial: 'baseline' }, mapSnapshot(new Map()), [base]);
    expect(items.map((i) => i.change)).toEqual([undefined]);
    expect(decodeEntry(items[0]?.stored as string).chain).toBe(BASELINE_CHAIN);
    const later = diffRecords(ctx, mapSnapshot(applyItems(new Map(), items)), [student(1, 'Nowak')]);
    expect(later.map((i) => i.change?.op)).toEqual(['updated']);
  });

  it('a value flipping back and forth gets a new id each time', () => {
    let snapshot = snapshotOf([base]);
    const ids: string[] = [];
    for (const name of ['Nowak', 'Kowalska', 'Nowak', 'Kowalska']) {
      const items = diffRecords(ctx, mapSnapshot(snapshot), [student(1, name)]);
      ids.push(items[0]?.change?.id as string);
      snapshot = applyItems(snapshot, items);
    }
    expect(new Set(ids).size).toBe(4);
  });

  it('detectedAt is not part of the id', () => {
    const a = diffRecord(ctx, student(1, 'Nowak'), stored);
    const b = diffRecord({ ...ctx, detectedAt: '2030-01-01T00:00:00.000Z' }, student(1, 'Nowak'), stored);
    expect(a?.change?.id).toBe(b?.change?.id);
  });

  it('finds duplicate ids and sorts only when needed', () => {
    expect(findDuplicateKey([{ id: 1 }, { id: 2 }, { id: 1 }], 'id')).toBe(1);
    expect(findDuplicateKey([{ id: 1 }, { id: 2 }], 'id')).toBeUndefined();
    const sorted = [{ id: 1 }, { id: 2 }];
    expect(sortByKey(sorted, 'id')).toBe(sorted);
    expect(sortByKey([{ id: 2 }, { id: 1 }], 'id').map((r) => r.id)).toEqual([1, 2]);
  });
});

// --- properties ------------------------------------------------------------------------------------

const leaf = fc.oneof(
  fc.constant(null), fc.integer({ min: -2, max: 2 }), fc.boolean(),
  fc.constantFrom('a', 'b', 'Łódź', 'Kwiatowa 4/5 ', ''), fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
);
const fieldName = fc.constantFrom('lastName', 'city', 'isArchived', 'email', 'x');
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.dictionary(fieldName, tie('value'), { maxKeys: 3 })),
}));
const record = fc
  .tuple(fc.integer({ min: 1, max: 12 }), fc.dictionary(fieldName, value, { maxKeys: 4 }))
  .map(([id, fields]) => ({ ...fields, id }) as PolledRecord);
const list = fc.uniqueArray(record, { selector: (r) => r.id, maxLength: 8 });

describe('diffRecords (properties)', () => {
  it('applying the changes to the previous list yields the current one', () => {
    fc.assert(
      fc.property(list, list, (previous, current) => {
        const snapshot = snapshotOf(previous);
        const items = diffRecords(ctx, mapSnapshot(snapshot), current);
        expect(canonicalById(applyChanges(previous, items))).toEqual(canonicalById(current.map((r) => [r.id, r])));
        // and the next snapshot holds exactly the current list
        const next = applyItems(snapshot, items);
        expect(canonicalById([...next].map(([k, v]) => [Number(k), JSON.parse(decodeEntry(v).json)]))).toEqual(
          canonicalById(current.map((r) => [r.id, r])),
        );
      }),
    );
  });

  it('identical lists give nothing', () => {
    fc.assert(
      fc.property(list, (records) => {
        expect(diffRecords(ctx, mapSnapshot(snapshotOf(records)), records)).toEqual([]);
      }),
    );
  });

  it('shuffled input gives the same result', () => {
    fc.assert(
      fc.property(list, list.chain((l) => fc.shuffledSubarray(l, { minLength: l.length }).map((s) => [l, s] as const)), (previous, [current, shuffled]) => {
        const snapshot = mapSnapshot(snapshotOf(previous));
        expect(diffRecords(ctx, snapshot, shuffled)).toEqual(diffRecords(ctx, snapshot, current));
      }),
    );
  });

  it('ids are stable, and one per key and change', () => {
    fc.assert(
      fc.property(list, list, (previous, current) => {
        const snapshot = mapSnapshot(snapshotOf(previous));
        const first = diffRecords(ctx, snapshot, current).map((i) => i.change?.id);
        const again = diffRecords({ ...ctx, detectedAt: '2031-01-01T00:00:00.000Z' }, snapshot, current).map((i) => i.change?.id);
        expect(again).toEqual(first);
        expect(new Set(first).size).toBe(first.length);
      }),
    );
  });
});
