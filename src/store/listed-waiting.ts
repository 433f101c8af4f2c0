import type { ListedDelivery } from './port-outbox.js';

/**
 * Names, for each listed log record that is not in flight, the delivery it waits behind: the first
 * one listed of its connector and order key (in flight, waiting for its next try, or dead). A
 * connector takes a key's records one at a time, in order, so the record goes only after that one
 * (docs/store.md, "The delivery log"); shown as pending "now", it would look stuck. Rows carry
 * their own (a `blocked` row's head, from the store); a row never waits for a log record.
 * `entries` are in enqueue order, as the lists return them.
 */
export function markWaiting(entries: readonly ListedDelivery[]): ListedDelivery[] {
  const heads = new Map<string, string>();
  return entries.map((entry) => {
    const key = `${entry.connector}\n${entry.orderKey}`;
    const head = heads.get(key);
    if (head === undefined) {
      heads.set(key, entry.id);
      return entry;
    }
    if (entry.log === undefined || entry.status !== 'pending' || entry.waitingFor !== undefined) return entry;
    return { ...entry, waitingFor: head };
  });
}
