import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { changeJson } from './commit.js';
import { deletedItem, diffRecord, type DiffContext, type DiffItem } from './diff.js';
import { testStudent } from './testing.js';

const ctx: DiffContext = { stream: 'students', detectedAt: '2026-03-01T10:00:00.000Z' };
const CHAIN = 'abcdefabcdef';

/** What commit.ts hands the store beside each change record, from the diff item's texts. */
const spliced = (item: DiffItem) =>
  changeJson(item.change!, item.stored === null ? null : item.stored.slice(CHAIN.length), item.previousJson ?? null);

describe('changeJson', () => {
  it('is the change record as JSON.stringify writes it, for created, updated and deleted', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.string(), fc.string(), (id, before, after) => {
        fc.pre(before !== after);
        const old = `${CHAIN}${JSON.stringify(testStudent(id, before))}`;
        const items = [
          diffRecord(ctx, testStudent(id, after), undefined)!,
          diffRecord(ctx, testStudent(id, after), old)!,
          deletedItem(ctx, String(id), old),
        ];
        for (const item of items) expect(spliced(item)).toBe(JSON.stringify(item.change));
      }),
    );
  });

  it('declines a shape it does not know (the store then serializes the value itself)', () => {
    const item = diffRecord(ctx, testStudent(1), undefined)!;
    expect(changeJson({ ...item.change!, extra: 1 } as never, item.stored!.slice(CHAIN.length), null)).toBeUndefined();
    expect(changeJson(item.change!, null, null)).toBeUndefined();
  });
});
