import type { OutboxEntry } from './entry.js';
import type { Candidate, ReadyHeap } from './ready-heap.js';

/**
 * Which entries a worker hands to its connector now. Only the head of each order key (its oldest
 * entry) may run, so an update never overtakes its create; a head that is failing (pending with a
 * later runAt), dead, or in flight holds back its own key and nothing else.
 *
 * `current(candidate)` returns the stored entry when the candidate still stands for it (it exists, is
 * pending with that runAt, heads its key, and is not in flight), else undefined, and the stale
 * candidate is dropped. Returns up to `limit` due entries, soonest first, and when the next candidate
 * becomes due (to set a timer) if the batch is not full.
 */
export function takeReady(
  heap: ReadyHeap,
  now: number,
  limit: number,
  current: (candidate: Candidate) => OutboxEntry | undefined,
): { batch: OutboxEntry[]; wakeAt: number | undefined } {
  const batch: OutboxEntry[] = [];
  const taken = new Set<string>();
  while (batch.length < limit) {
    const top = heap.peek();
    if (!top) return { batch, wakeAt: undefined };
    const entry = taken.has(top.id) ? undefined : current(top);
    if (!entry) {
      heap.pop();
      continue;
    }
    if (top.runAt > now) return { batch, wakeAt: top.runAt };
    heap.pop();
    taken.add(entry.id);
    batch.push(entry);
  }
  return { batch, wakeAt: undefined };
}

/** Whether a stored entry may run as the candidate says (the pure part of `current`). */
export function stillStands(entry: OutboxEntry | undefined, candidate: Candidate, isHead: boolean, inFlight: boolean): entry is OutboxEntry {
  return entry !== undefined && entry.status === 'pending' && entry.runAt === candidate.runAt && isHead && !inFlight;
}
