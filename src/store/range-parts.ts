import { compareKeys, type Key } from '../streams/index.js';

/**
 * A first cycle's created changes of a stream are owed in parts (docs/store.md): ranges of disjoint
 * keys, each with its own cursor and lease. One range serves one batch at a time, so a connector
 * could not claim its next batch of the stream while the last one is delivered or settled; with
 * parts it claims from another part.
 */
export const RANGE_PARTS = 4;
/** Rows per part at the least: a small snapshot is owed by one range. */
export const PART_ROWS = 2000;
/** Keys sorted to find the bounds: the counts are exact whatever the sample, only the balance varies. */
const SAMPLE = 4096;

export interface RangePart {
  /** The part's keys are those after `after` (all from the first, when absent) up to `upto`. */
  after?: Key;
  upto: Key;
  count: number;
}

/** How many parts a range of `n` rows is owed in. */
export function partsFor(n: number): number {
  return Math.max(1, Math.min(RANGE_PARTS, Math.floor(n / PART_ROWS)));
}

/**
 * Splits distinct keys, in any order, into parts of about equal size: each part's bounds and the exact
 * number of keys in it. Together the parts cover every key once, in key order.
 */
export function rangeParts(keys: readonly Key[]): RangePart[] {
  if (keys.length === 0) return [];
  // The engines order such keys otherwise than compareKeys (streams/key.ts): then counts by it could be wrong.
  const wanted = keys.some(beyondBmp) ? 1 : partsFor(keys.length);
  const step = Math.max(1, Math.floor(keys.length / SAMPLE));
  const sample: Key[] = [];
  for (let i = 0; i < keys.length; i += step) sample.push(keys[i]!);
  sample.sort(compareKeys);
  // Each bound is a key, and the bounds increase: every part but the last holds its bound at least.
  const bounds: Key[] = [];
  for (let p = 1; p < wanted; p++) {
    const bound = sample[Math.floor((sample.length * p) / wanted) - 1];
    if (bound !== undefined && (bounds.length === 0 || compareKeys(bound, bounds.at(-1)!) > 0)) bounds.push(bound);
  }
  const counts = new Array<number>(bounds.length + 1).fill(0);
  let max = keys[0]!;
  for (const key of keys) {
    let p = 0;
    while (p < bounds.length && compareKeys(key, bounds[p]!) > 0) p += 1;
    counts[p]! += 1;
    if (compareKeys(key, max) > 0) max = key;
  }
  const parts: RangePart[] = [];
  counts.forEach((count, p) => {
    if (count === 0) return;
    parts.push({ ...(p === 0 ? {} : { after: bounds[p - 1]! }), upto: p < bounds.length ? bounds[p]! : max, count });
  });
  return parts;
}

const beyondBmp = (key: Key): boolean => typeof key === 'string' && /[\uD800-\uDFFF]/.test(key);
