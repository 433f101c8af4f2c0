import type { CreatedRange, DeliveryFilter } from '../store/index.js';

/**
 * What a first cycle's ranges still owe one connector on one stream: created changes delivered
 * straight from the snapshot in key order, with no delivery row of their own until one fails
 * (docs/store.md, "Created ranges"), so `deliveries list` counts them rather than lists them.
 */
export interface OwedRange {
  connector: string;
  stream: string;
  remaining: number;
  /** When the next batch is due (the earliest of the stream's parts), and what the last failed one met. */
  runAt: number;
  attempts: number;
  lastError?: string;
}

/** The ranges a list with this filter covers, a line per connector and stream; none for dead or in-flight only. */
export function owedOfRanges(ranges: readonly CreatedRange[], filter: DeliveryFilter = {}): OwedRange[] {
  if (filter.state === 'dead' || filter.state === 'active') return [];
  const owed = new Map<string, OwedRange>();
  for (const range of ranges) {
    if (filter.connector !== undefined && range.connector !== filter.connector) continue;
    const key = `${range.connector}\u0000${range.stream}`;
    const seen = owed.get(key);
    if (!seen) {
      owed.set(key, {
        connector: range.connector, stream: range.stream, remaining: range.remaining, runAt: range.runAt, attempts: range.attempts,
        ...(range.lastError === undefined ? {} : { lastError: range.lastError }),
      });
      continue;
    }
    seen.remaining += range.remaining;
    if (range.runAt < seen.runAt) seen.runAt = range.runAt;
    if (range.attempts > seen.attempts) {
      seen.attempts = range.attempts;
      if (range.lastError !== undefined) seen.lastError = range.lastError;
    }
  }
  return [...owed.values()];
}
