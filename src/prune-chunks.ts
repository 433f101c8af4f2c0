import type { Clock } from './clock.js';

/**
 * Old rows are forgotten a chunk per transaction: a day of a big school's delivery attempts is
 * hundreds of thousands of rows, and one transaction deleting them all would hold every webhook's
 * commit behind it (on SQLite the database thread runs one transaction at a time) for seconds.
 */
export const PRUNE_CHUNK = 2000;
/** After each chunk the pruning rests this many times as long as the chunk took, leaving the rest of the store's time to others. */
export const PRUNE_REST = 2;

/**
 * Runs `step` (one transaction forgetting at most `limit` rows, resolving with how many went) until
 * a step forgets fewer than `limit` or `signal` aborts, resting after each step. Resolves with how
 * many rows went in all; a step's failure rejects, with what went before it gone.
 */
export async function pruneInChunks(
  step: (limit: number) => Promise<number>,
  options: { clock: Clock; signal?: AbortSignal | undefined; limit?: number },
): Promise<number> {
  const { clock, signal } = options;
  const limit = options.limit ?? PRUNE_CHUNK;
  let total = 0;
  for (;;) {
    const started = clock.now();
    const gone = await step(limit);
    total += gone;
    if (gone < limit || signal?.aborted) return total;
    const rest = Math.max(0, clock.now() - started) * PRUNE_REST;
    if (rest > 0) await clock.sleep(rest, signal).catch(() => {});
    if (signal?.aborted) return total;
  }
}
