import { diffText, newItem, type DiffContext, type DiffItem, type PolledRecord } from './diff.js';
import type { ParseSink } from './list-worker.js';
import type { FreshEntries } from './list-parse.js';
import { CHAIN_LENGTH, type SnapshotView } from './snapshot.js';

/**
 * The diff of one stream, fed batch by batch as the list worker parses the list (issue 7, heap):
 * each record's text is compared with its snapshot entry right away and only what changed is kept,
 * so a no-change cycle over 300,000 records holds 300,000 keys, not 300,000 records.
 *
 * Nothing here is final until the list has been read to its end: the caller commits only after the
 * read resolved (a truncated body rejects after some records were taken) and after the guards ran.
 * Per record this is exactly what `diffRecords` does (the same diff, the same ids); the items are
 * ascending by id whatever the arrival order, as diffRecords gives them.
 */
export interface StreamScan extends ParseSink {
  /** Records taken (the list's length once the read has finished). */
  readonly fetched: number;
  /** Keys seen, for the deletions and the delete guard. */
  readonly present: ReadonlySet<string>;
  /** The first id seen twice: such a list is malformed and aborts the cycle. */
  readonly duplicate: string | undefined;
  /**
   * A key the worker recognised by its bytes that the snapshot does not hold: the index is stale
   * (never after a committed cycle; the check keeps a stale index from ever hiding a record). The
   * read must be done again without the index.
   */
  readonly stale: string | undefined;
  /** The created/updated/baseline items, ascending by id (deletions are found after the read). */
  items(): DiffItem[];
  /** The records taken, when asked to keep them (the roster export needs whole students). */
  kept(): PolledRecord[] | undefined;
}

export function createStreamScan(ctx: DiffContext, snapshot: SnapshotView, keep = false): StreamScan {
  const present = new Set<string>();
  const items: DiffItem[] = [];
  const kept: PolledRecord[] | undefined = keep ? [] : undefined;
  let fetched = 0;
  let duplicate: string | undefined;
  let stale: string | undefined;
  let lastId = -Infinity;
  let ascending = true;
  /** Shared bookkeeping of a taken key; false when the key was seen before (a duplicate id). */
  const see = (key: string): boolean => {
    fetched += 1;
    if (duplicate !== undefined) return false; // the cycle aborts: diffing the rest would be wasted work
    if (present.has(key)) {
      duplicate = key;
      return false;
    }
    present.add(key);
    return true;
  };
  return {
    known(keys) {
      for (const key of keys) {
        if (snapshot.get(key) === undefined) stale ??= key;
        see(key);
      }
    },
    parsed(pairs, fresh) {
      for (let i = 0; i < pairs.length; i += 2) {
        const key = pairs[i] as string;
        // With `fresh`, the worker sends each record's snapshot entry: its text after the chain.
        const text = pairs[i + 1] as string;
        const parse = lazyRecord(text, fresh ? CHAIN_LENGTH : 0);
        if (kept) kept.push(parse());
        if (!see(key)) continue;
        const id = Number(key);
        if (id < lastId) ascending = false;
        lastId = id;
        const stored = snapshot.get(key);
        const r = i / 2;
        // A record new to an empty snapshot (a first cycle): the worker's entry is the diff's, its
        // bytes already encoded. Should the snapshot have gained the key meanwhile, the usual diff.
        const item = !fresh
          ? diffText(ctx, key, text, stored, parse)
          : stored === undefined
            ? newItem(ctx, key, text, parse, rawOf(fresh, r))
            : diffText(ctx, key, text.slice(CHAIN_LENGTH), stored, parse);
        if (item) items.push(item);
      }
    },
    get fetched() {
      return fetched;
    },
    present,
    get duplicate() {
      return duplicate;
    },
    get stale() {
      return stale;
    },
    items: () => (ascending ? items : items.sort((a, b) => Number(a.key) - Number(b.key))),
    kept: () => kept,
  };
}

/**
 * The record of a text, parsed at most once and only when asked (an unchanged record never is). A
 * function returning the closure rather than a closure written in the loop: tsx names every arrow
 * assigned to a binding (a defineProperty per record, 300,000 per first cycle).
 */
function lazyRecord(text: string, from: number): () => PolledRecord {
  let record: PolledRecord | undefined;
  return () => (record ??= JSON.parse(from === 0 ? text : text.slice(from)) as PolledRecord);
}

/** Record r's raw value in a batch of fresh entries (FreshEntries.raws). */
function rawOf(fresh: FreshEntries, r: number): Uint8Array {
  return fresh.raws.subarray(r === 0 ? 0 : fresh.rawEnds[r - 1], fresh.rawEnds[r]);
}
