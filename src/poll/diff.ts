import { newChain, type ChangeOp, type ChangeRecord } from '../records.js';
import { compareKeys, parseKey, polledStream, type Key, type PolledStreamName } from '../streams/index.js';
import { shortHash } from './canonical.js';
import { leafChanges } from './leaf-changes.js';
import { CHAIN_LENGTH, decodeEntry, encodeEntry, holdsJson, type SnapshotView } from './snapshot.js';

/**
 * The keyed field-level diff: pure functions from (snapshot entry, current record) to a
 * change record plus the snapshot's next entry. The poller runs them record by record so it can
 * yield to the event loop; `diffRecords` runs them on a whole list (tests, dry runs of small lists).
 *
 * Change ids are `<stream>:<key>:<12 hex>`, the hash covering the op, the key, the snapshot entry
 * before (its chain and content) and the content after. A key travels here as its text (what is
 * hashed, and what a SnapshotView is keyed by); a change record carries it in its stream's key type. The same change seen again — after a crash
 * before its commit — has the same id; any later change has a different one, because the chain moved.
 *
 * A record's text is plain JSON.stringify in the upstream's key order (the client keeps that order):
 * the native serializer is the cheapest full walk of a record, and it makes "unchanged" one string
 * comparison — at 300,000 records per cycle a sorted-key canonical form cost as much as the fetch
 * itself. Should the upstream ever reorder keys, the texts differ but leafChanges finds nothing: the
 * entry is rewritten once and no change is reported.
 */
export interface PolledRecord {
  [field: string]: unknown;
}

export interface DiffContext {
  stream: PolledStreamName;
  /** ISO 8601 time of the cycle; not part of any id. */
  detectedAt: string;
  /** `baseline`: a key missing from the snapshot is recorded silently (first cycle, poll.initial). */
  initial?: 'emit' | 'baseline' | undefined;
}

/** One key's outcome: the change to emit (none for a baseline entry) and the snapshot's next entry. */
export interface DiffItem {
  /** The key as text. */
  key: string;
  change: ChangeRecord | undefined;
  /** The new snapshot entry, or null to delete it. */
  stored: string | null;
  /** A deletion's hash: the chain the key leaves behind, which a later re-creation starts from (newChain). */
  gone?: string;
}

/** Diffs one current record against its snapshot entry; undefined when nothing changed. */
export function diffRecord(ctx: DiffContext, record: PolledRecord, stored: string | undefined): DiffItem | undefined {
  return diffText(ctx, keyText(ctx, record), JSON.stringify(record), stored, () => record);
}

/** A record's key as text, from the field its stream's description names. */
const keyText = (ctx: DiffContext, record: PolledRecord): string => String(record[polledStream(ctx.stream).key.field]);

/**
 * The same from the record's text (what the list worker hands over): the record itself is parsed
 * only when a change needs it (`record` gives it), so an unchanged or silently recorded one never is.
 */
export function diffText(
  ctx: DiffContext, key: string, json: string, stored: string | undefined,
  record: () => PolledRecord = () => JSON.parse(json) as PolledRecord,
  gone?: string,
): DiffItem | undefined {
  if (stored !== undefined && holdsJson(stored, json)) return undefined;
  if (stored === undefined) return newItem(ctx, key, encodeEntry(newChain(ctx.initial, key, json, gone), json), record);
  const before = decodeEntry(stored);
  const previous = JSON.parse(before.json) as Record<string, unknown>;
  const hash = shortHash('updated', key, before.chain, before.json, json);
  const current = record();
  const change = changeRecord(ctx, 'updated', key, hash, current, previous);
  change.changes = leafChanges(previous, current);
  // Same content written differently (an older snapshot format): store it anew, report nothing.
  if (change.changes.length === 0) return { key, change: undefined, stored: encodeEntry(before.chain, json) };
  return { key, change, stored: encodeEntry(hash, json) };
}

/** The item of a key the snapshot does not hold, its entry given (see newChain): created, or recorded silently. */
export function newItem(ctx: DiffContext, key: string, stored: string, record: () => PolledRecord): DiffItem {
  const change = ctx.initial === 'baseline' ? undefined : changeRecord(ctx, 'created', key, stored.slice(0, CHAIN_LENGTH), record(), null);
  return { key, change, stored };
}

/** The change for a key that vanished from the full list. */
export function deletedItem(ctx: DiffContext, key: string, stored: string): DiffItem {
  const before = decodeEntry(stored);
  const hash = shortHash('deleted', key, before.chain, before.json, '');
  const previous = JSON.parse(before.json) as Record<string, unknown>;
  return { key, change: changeRecord(ctx, 'deleted', key, hash, null, previous), stored: null, gone: hash };
}

/** The key of a text in its stream's type: a change record carries it so (`"key": 123`). */
export const keyOfText = (stream: PolledStreamName, text: string): Key => parseKey(polledStream(stream).key.type, text);

function changeRecord(
  ctx: DiffContext, op: ChangeOp, key: string, hash: string,
  record: Record<string, unknown> | null, previous: Record<string, unknown> | null,
): ChangeRecord {
  return { id: `${ctx.stream}:${key}:${hash}`, stream: ctx.stream, op, key: keyOfText(ctx.stream, key), detectedAt: ctx.detectedAt, changes: [], record, previous };
}

/** Snapshot keys absent from the current list, in key order. */
export function missingKeys(ctx: DiffContext, snapshot: SnapshotView, present: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const key of snapshot.keys()) if (!present.has(key)) out.push(key);
  return out.sort((a, b) => compareKeys(keyOfText(ctx.stream, a), keyOfText(ctx.stream, b)));
}

/** The current list in key order (API v2 already sends it so; then no copy is made). */
export function sortByKey<T extends Record<string, unknown>>(records: readonly T[], field: string): readonly T[] {
  const before = (a: T, b: T) => compareKeys(a[field] as Key, b[field] as Key);
  for (let i = 1; i < records.length; i++) {
    if (before(records[i - 1] as T, records[i] as T) > 0) return [...records].sort(before);
  }
  return records;
}

/** The first key that appears twice, if any: such a list is malformed and must not reach the diff. */
export function findDuplicateKey(records: readonly Record<string, unknown>[], field: string): Key | undefined {
  const seen = new Set<unknown>();
  for (const record of records) {
    if (seen.has(record[field])) return record[field] as Key;
    seen.add(record[field]);
  }
  return undefined;
}

/**
 * The whole diff of one stream: created/updated in ascending key order, then deleted in ascending
 * key order (the order the poller commits them). The input order of `current` does not matter.
 */
export function diffRecords(ctx: DiffContext, snapshot: SnapshotView, current: readonly PolledRecord[]): DiffItem[] {
  const items: DiffItem[] = [];
  const present = new Set<string>();
  for (const record of sortByKey(current, polledStream(ctx.stream).key.field)) {
    const key = keyText(ctx, record);
    present.add(key);
    const item = diffRecord(ctx, record, snapshot.get(key));
    if (item) items.push(item);
  }
  for (const key of missingKeys(ctx, snapshot, present)) items.push(deletedItem(ctx, key, snapshot.get(key) as string));
  return items;
}

/** A Map as a SnapshotView (tests, and applying a diff in memory). */
export function mapSnapshot(map: ReadonlyMap<string, string>): SnapshotView {
  return { get: (key) => map.get(key), keys: () => map.keys(), size: map.size };
}
