import { diffRecord, type DiffContext, type DiffItem, type PolledRecord } from './diff.js';
import type { SnapshotView } from './snapshot.js';

/**
 * The diff of one stream, fed one record at a time as the upstream client parses the list (issue 7,
 * heap): each record is compared with its snapshot entry right away and only what changed is kept,
 * so a no-change cycle over 300,000 records holds 300,000 keys, not 300,000 parsed objects.
 *
 * Nothing here is final until the list has been read to its end: the caller commits only after the
 * client resolved (a truncated body rejects after some records were taken) and after the guards ran.
 * Per record this is exactly what `diffRecords` does (same diffRecord, same ids); the order of the
 * items is ascending by id whatever the arrival order, as diffRecords gives it.
 */
export interface StreamScan {
  take(record: PolledRecord): void;
  /** Records taken (the list's length once the read has finished). */
  readonly fetched: number;
  /** Keys seen, for the deletions and the delete guard. */
  readonly present: ReadonlySet<string>;
  /** The first id seen twice: such a list is malformed and aborts the cycle. */
  readonly duplicate: string | undefined;
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
  let lastId = -Infinity;
  let ascending = true;
  return {
    take(record) {
      fetched += 1;
      kept?.push(record);
      const key = String(record.id);
      if (duplicate !== undefined) return; // the cycle aborts: diffing the rest would be wasted work
      if (present.has(key)) {
        duplicate = key;
        return;
      }
      present.add(key);
      if (record.id < lastId) ascending = false;
      lastId = record.id;
      const item = diffRecord(ctx, record, snapshot.get(key));
      if (item) items.push(item);
    },
    get fetched() {
      return fetched;
    },
    present,
    get duplicate() {
      return duplicate;
    },
    items: () => (ascending ? items : items.sort((a, b) => Number(a.key) - Number(b.key))),
    kept: () => kept,
  };
}
