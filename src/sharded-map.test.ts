import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShardedMap } from './sharded-map.js';

describe('ShardedMap', () => {
  it('holds what a Map holds after any sequence of sets and deletes', () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'b', '1', '9', ':', 'ż'), maxLength: 6 });
    const op = fc.oneof(fc.tuple(fc.constant('set' as const), key, fc.integer()), fc.tuple(fc.constant('delete' as const), key, fc.constant(0)));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const sharded = new ShardedMap<number>();
        const plain = new Map<string, number>();
        for (const [kind, k, v] of ops) {
          if (kind === 'set') {
            expect(sharded.set(k, v)).toBe(sharded);
            plain.set(k, v);
          } else {
            expect(sharded.delete(k)).toBe(plain.delete(k));
          }
          expect(sharded.size).toBe(plain.size);
          expect(sharded.get(k)).toBe(plain.get(k));
          expect(sharded.has(k)).toBe(plain.has(k));
        }
        const byKey = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : 1);
        expect([...sharded].sort(byKey)).toEqual([...plain].sort(byKey));
        expect([...sharded.keys()].sort()).toEqual([...plain.keys()].sort());
        expect([...sharded.values()].sort()).toEqual([...sharded].map(([, v]) => v).sort());
      }),
    );
  });

  it('from() holds the entries given', () => {
    const entries: [string, number][] = [['a', 1], ['b', 2], ['c', 3]];
    const map = ShardedMap.from(new Map(entries));
    expect(map.size).toBe(3);
    expect([...map].sort()).toEqual(entries);
  });

  it('spreads its growth: 300,000 keys added in id order never grow more than 16,384 entries within 1,000 additions', () => {
    // A Map grows (rehashing all it holds) when it reaches a power of two; one Map of 300,000 keys
    // rehashes 262,144 entries at once. Keys as the poll makes them: decimal ids and hashed ids.
    for (const keyOf of [(i: number) => String(i + 1), (i: number) => `files:students:${i + 1}:${((i * 2654435761) >>> 0).toString(16)}`]) {
      const map = new ShardedMap<number>();
      let sizes = map.shardSizes();
      let grown = 0;
      let most = 0;
      for (let i = 0; i < 300_000; i++) {
        if (i % 1000 === 0) [most, grown] = [Math.max(most, grown), 0];
        map.set(keyOf(i), i);
        const now = map.shardSizes();
        for (let s = 0; s < now.length; s++) {
          const size = now[s] as number;
          if (size !== sizes[s] && size >= 1024 && (size & (size - 1)) === 0) grown += size;
        }
        sizes = now;
      }
      expect(map.size).toBe(300_000);
      expect(Math.max(most, grown)).toBeLessThanOrEqual(16_384);
      expect(Math.max(...map.shardSizes())).toBeLessThan(300_000 * 0.04);
    }
  });
});
