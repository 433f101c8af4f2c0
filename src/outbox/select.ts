import type { OutboxEntry } from './entry.js';

/**
 * Which entries a worker may hand to its connector now (STYLE 5: pure). Only the head of each order
 * key (its oldest entry) is eligible, so an update never overtakes its create; a head that is failing
 * (pending with a later runAt), dead, or in flight holds back its own key and nothing else.
 *
 * `heads` are the oldest entries of each order key. Returns up to `limit` ready entries, oldest first,
 * and when the next not-yet-due head becomes due (to set a timer).
 */
export function selectBatch(
  heads: Iterable<OutboxEntry>,
  now: number,
  limit: number,
  busy: ReadonlySet<string>,
): { batch: OutboxEntry[]; wakeAt: number | undefined } {
  const ready: OutboxEntry[] = [];
  let wakeAt: number | undefined;
  for (const head of heads) {
    if (head.status !== 'pending' || busy.has(head.id)) continue;
    if (head.runAt <= now) ready.push(head);
    else if (wakeAt === undefined || head.runAt < wakeAt) wakeAt = head.runAt;
  }
  ready.sort((a, b) => a.seq - b.seq);
  if (ready.length > limit) {
    // Left-over ready heads are due now: the caller comes back as soon as a slot frees.
    ready.length = limit;
    wakeAt = now;
  }
  return { batch: ready, wakeAt };
}
