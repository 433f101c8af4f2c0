import type { Settlement } from './port.js';

/**
 * The attempt of a range's batch from which a batch retried whole no longer holds its range: its
 * changes become delivery rows of their own, each with its back-off, and the range goes on. Before
 * it, a batch retried whole backs the range off as one delivery would (a receiver that is down gets
 * one probe, not one per key). So a key whose delivery keeps failing while the others' would go
 * through holds back only itself after two short waits, also for a connector that takes one record
 * per batch, where every failure is a batch retried whole.
 */
export const RANGE_HOLD_ATTEMPTS = 3;

/** Whether a range's settled batch backs the range off whole (every change to be tried again, early attempts). */
export function holdsRange(batch: readonly Settlement[]): boolean {
  return batch.length > 0 && batch.every((s) => s.status === 'pending' && s.attempts < RANGE_HOLD_ATTEMPTS);
}
