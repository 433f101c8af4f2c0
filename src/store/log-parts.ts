/**
 * The parts of the delivery log (docs/store.md, "The delivery log"): a webhook's record goes into
 * the part of its order key, so all the records of a key are in one part, and a connector reads
 * each part through a cursor of its own, one batch in flight per part.
 */

/** How many parts the log has: at most this many batches of log records in flight per connector. */
export const LOG_PARTS = 16;

/** The part of an order key: FNV-1a of its UTF-16 code units, the same in every replica and version. */
export function partOf(orderKey: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < orderKey.length; i++) {
    hash ^= orderKey.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % LOG_PARTS;
}
