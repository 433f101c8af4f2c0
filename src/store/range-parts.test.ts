import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, type Key } from '../streams/index.js';
import { PART_ROWS, RANGE_PARTS, partsFor, rangeParts, type RangePart } from './range-parts.js';

/** The keys each part holds, as the engines select them: after `after`, up to `upto`. */
const inPart = (keys: readonly Key[], part: RangePart) =>
  keys.filter((k) => (part.after === undefined || compareKeys(k, part.after) > 0) && compareKeys(k, part.upto) <= 0);

function checkCover(keys: readonly Key[], parts: readonly RangePart[]): void {
  const sorted = [...keys].sort(compareKeys);
  expect(parts.map((p) => inPart(keys, p).sort(compareKeys)).flat()).toEqual(sorted);
  parts.forEach((part, i) => {
    expect(part.count).toBe(inPart(keys, part).length);
    expect(part.count).toBeGreaterThan(0);
    expect(part.after).toEqual(i === 0 ? undefined : parts[i - 1]!.upto);
  });
  expect(parts.at(-1)!.upto).toEqual(sorted.at(-1));
}

describe('rangeParts', () => {
  it('owes a small stream in one range and a big one in up to RANGE_PARTS of about equal size', () => {
    expect(partsFor(0)).toBe(1);
    expect(partsFor(2 * PART_ROWS - 1)).toBe(1);
    expect(partsFor(2 * PART_ROWS)).toBe(2);
    expect(partsFor(1_000_000)).toBe(RANGE_PARTS);
    expect(rangeParts([])).toEqual([]);
    const keys = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_000 + 1);
    const parts = rangeParts(keys);
    expect(parts).toHaveLength(RANGE_PARTS);
    checkCover(keys, parts);
    for (const part of parts) expect(Math.abs(part.count - 25_000)).toBeLessThan(2_500);
  });

  it('covers every key once, in key order, with exact counts, whatever the keys and their order', () => {
    // Most of them big enough for several parts (fast-check's arrays are short unless told).
    const sizes = (most: number) => fc.oneof({ arbitrary: fc.constant({ minLength: 1, maxLength: 50 }), weight: 1 }, { arbitrary: fc.constant({ minLength: 2 * PART_ROWS, maxLength: most }), weight: 3 });
    const integers = sizes(12_000).chain((size) => fc.uniqueArray(fc.integer({ min: -1e12, max: 1e12 }), size));
    const strings = sizes(9_000).chain((size) => fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6, unit: 'grapheme-ascii' }), size));
    fc.assert(fc.property(fc.oneof(integers, strings), (keys) => checkCover(keys, rangeParts(keys))), { numRuns: 40 });
  });

  it('splits keys that are mostly alike, and keys in key order', () => {
    const clustered = [...Array.from({ length: 9_000 }, (_, i) => i + 1), 1e9, 1e9 + 1];
    checkCover(clustered, rangeParts(clustered));
    const ordered = Array.from({ length: 8_000 }, (_, i) => `k${String(i).padStart(5, '0')}`);
    expect(rangeParts(ordered)).toHaveLength(RANGE_PARTS);
    checkCover(ordered, rangeParts(ordered));
  });

  it('owes keys beyond U+FFFF in one range: the engines order them otherwise than JavaScript', () => {
    const keys = [...Array.from({ length: 9_000 }, (_, i) => `k${i}`), 'k\u{1F600}'];
    expect(rangeParts(keys)).toHaveLength(1);
  });
});
