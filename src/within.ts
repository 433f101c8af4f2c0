import type { Clock } from './clock.js';

/**
 * `work`'s value if it settles within `ms`, else `undefined` once they have passed; `work` goes on
 * unwatched (a rejection after that is nobody's to hear). Rejects with `work`'s error within them.
 */
export async function within<T>(work: Promise<T>, ms: number, clock: Pick<Clock, 'sleep'>): Promise<{ value: T } | undefined> {
  const deadline = new AbortController();
  const late = clock.sleep(ms, deadline.signal).then(() => undefined, () => undefined);
  try {
    return await Promise.race([work.then((value) => ({ value })), late]);
  } finally {
    deadline.abort();
  }
}
