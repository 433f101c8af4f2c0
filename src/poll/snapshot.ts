import type { Op, Store } from '../store/index.js';

/**
 * The snapshot: the last polled state of each stream, one store entry per record (see README.md).
 *
 * Collection `snapshot.<stream>`, key = the record id as a string, value = one string:
 * 12 characters of change chain (the hash part of the last change id of this key, or `BASELINE`
 * padding for a silently recorded one) followed by the record's JSON. One string per record keeps the
 * snapshot compact and makes "unchanged" a string comparison; the chain makes the next change id depend on the history of the key, so a value that
 * flips back and forth (A→B, B→A, A→B) gets a new id each time instead of repeating an old one.
 */
export type PolledStream = 'students' | 'users';
export const POLLED_STREAMS: readonly PolledStream[] = ['students', 'users'];

export const CHAIN_LENGTH = 12;
/** The chain of a record recorded without a change (poll.initial: baseline). */
export const BASELINE_CHAIN = '-'.repeat(CHAIN_LENGTH);

export const snapshotCollection = (stream: PolledStream) => `snapshot.${stream}`;

/** The `state` collection entry saying a stream's first cycle is done (poll.initial applies before). */
export const STATE_COLLECTION = 'state';
export const initialDoneKey = (stream: PolledStream) => `poll.initialDone.${stream}`;

export interface SnapshotEntry {
  chain: string;
  json: string;
}

export function encodeEntry(chain: string, json: string): string {
  if (chain.length !== CHAIN_LENGTH) throw new Error(`chain must be ${CHAIN_LENGTH} characters`);
  return chain + json;
}

export function decodeEntry(stored: string): SnapshotEntry {
  return { chain: stored.slice(0, CHAIN_LENGTH), json: stored.slice(CHAIN_LENGTH) };
}

/** True when the stored entry holds exactly this JSON text (no allocation). */
export function holdsJson(stored: string, json: string): boolean {
  return stored.length === CHAIN_LENGTH + json.length && stored.endsWith(json);
}

/** Read access to one stream's snapshot; the store itself in production, a Map in tests. */
export interface SnapshotView {
  get(key: string): string | undefined;
  keys(): Iterable<string>;
  readonly size: number;
}

export function storeSnapshotView(store: Store, stream: PolledStream): SnapshotView {
  const collection = snapshotCollection(stream);
  return {
    get: (key) => store.get<string>(collection, key),
    *keys() {
      for (const [key] of store.entries<string>(collection)) yield key;
    },
    get size() {
      return store.size(collection);
    },
  };
}

/** `raw`: the entry's UTF-8 bytes, when the list worker made them (Op.raw). */
export function putEntryOp(stream: PolledStream, key: string, stored: string, raw?: Uint8Array): Op {
  return { op: 'put', c: snapshotCollection(stream), k: key, v: stored, ...(raw ? { raw } : {}) };
}

export function deleteEntryOp(stream: PolledStream, key: string): Op {
  return { op: 'del', c: snapshotCollection(stream), k: key };
}
