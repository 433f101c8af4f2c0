import { hash } from 'node:crypto';
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
  /**
   * Sees a record's raw bytes before it is parsed (ListVisitor.known). Bytes the last committed cycle
   * saw for a key are that key's snapshot entry, unchanged: the record is taken without parsing,
   * validating or diffing it, and true is returned. Otherwise false, and `take` follows.
   */
  known(raw: Uint8Array): boolean;
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
  /** Raw-bytes hash → key of every record taken: the next cycle's index, once this one has committed. */
  rawIndex(): RawIndex;
}

/** Hash of a record's raw bytes (as the upstream sent them) → its key. */
export type RawIndex = ReadonlyMap<string, string>;

/** SHA-256: a collision would hide a change, so not a short or non-cryptographic hash. */
const rawHash = (raw: Uint8Array): string => hash('sha256', raw, 'base64');

/**
 * `previous`: the raw index of the last committed cycle (empty on a first cycle or after a restart:
 * every record is then parsed and diffed). Ignored when keeping records, which must all be parsed.
 */
export function createStreamScan(ctx: DiffContext, snapshot: SnapshotView, keep = false, previous: RawIndex = new Map()): StreamScan {
  const present = new Set<string>();
  const items: DiffItem[] = [];
  const kept: PolledRecord[] | undefined = keep ? [] : undefined;
  const next = new Map<string, string>();
  /** Hashes of the records declined by `known`, in list order, waiting for their `take`. */
  const declined: string[] = [];
  let fetched = 0;
  let duplicate: string | undefined;
  let lastId = -Infinity;
  let ascending = true;
  /** Shared bookkeeping of a taken key; false when the key was seen before (a duplicate id). */
  const see = (key: string, id: number): boolean => {
    fetched += 1;
    if (duplicate !== undefined) return false; // the cycle aborts: diffing the rest would be wasted work
    if (present.has(key)) {
      duplicate = key;
      return false;
    }
    present.add(key);
    if (id < lastId) ascending = false;
    lastId = id;
    return true;
  };
  return {
    known(raw) {
      const hashed = rawHash(raw);
      const key = keep ? undefined : previous.get(hashed);
      // Known bytes only count while the snapshot still holds that key (it always does after a
      // committed cycle; the check keeps a stale index from ever hiding a record).
      if (key === undefined || snapshot.get(key) === undefined) {
        declined.push(hashed);
        return false;
      }
      if (see(key, Number(key))) next.set(hashed, key);
      return true;
    },
    take(record) {
      const hashed = declined.shift();
      kept?.push(record);
      const key = String(record.id);
      if (!see(key, record.id)) return;
      const item = diffRecord(ctx, record, snapshot.get(key));
      if (item) items.push(item);
      if (hashed !== undefined) next.set(hashed, key);
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
    rawIndex: () => next,
  };
}
