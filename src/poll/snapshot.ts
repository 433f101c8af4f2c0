import { BASELINE_CHAIN, CHAIN_LENGTH } from '../records.js';
import type { PolledStreamName } from '../streams/index.js';

/**
 * The snapshot's entries as the diff sees them (poll/README.md): the last polled state of each
 * record, one string per record: 12 characters of change chain (the hash part of the key's last
 * change id, or the baseline padding for a record recorded silently) followed by the record's JSON.
 * The store keeps the two parts in columns of their own (`chain`, `body`).
 *
 * The chain makes the next change id depend on the key's history, so a value that flips back and
 * forth (A→B, B→A, A→B) gets a new id each time instead of repeating an old one.
 */
export { BASELINE_CHAIN, CHAIN_LENGTH };

/** The state entry saying a stream's first cycle is done (poll.initial applies before). */
export const initialDoneKey = (stream: PolledStreamName) => `poll.initialDone.${stream}`;

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

/** Read access to one stream's snapshot entries, as the pure diff takes it (a Map in tests). */
export interface SnapshotView {
  get(key: string): string | undefined;
  keys(): Iterable<string>;
  readonly size: number;
}
