import type { Clock } from './clock.js';

/**
 * A deadline for each of many waits at once (every webhook's commit), kept by one look every
 * `tickMs` while any is waiting, not by a timer each: a timer and an AbortSignal per wait cost
 * several times the rest of a webhook's work on the event loop. A wait ends late by up to `tickMs`.
 */
export interface Deadlines {
  /** `work`'s value if it settles within the time, else `undefined` once it has passed; `work` goes on unwatched. */
  within<T>(work: Promise<T>): Promise<{ value: T } | undefined>;
}

export function createDeadlines(clock: Pick<Clock, 'now' | 'sleep'>, ms: number, tickMs = Math.min(1000, ms)): Deadlines {
  const waiting = new Set<{ at: number; late(): void }>();
  let looking = false;
  const look = async () => {
    looking = true;
    try {
      while (waiting.size > 0) {
        await clock.sleep(tickMs);
        const now = clock.now();
        for (const wait of waiting) {
          if (now - wait.at < ms) continue;
          waiting.delete(wait);
          wait.late();
        }
      }
    } finally {
      looking = false;
    }
  };
  return {
    within(work) {
      return new Promise((resolve, reject) => {
        const wait = { at: clock.now(), late: () => resolve(undefined) };
        waiting.add(wait);
        if (!looking) void look();
        work.then(
          (value) => {
            waiting.delete(wait);
            resolve({ value });
          },
          (error: unknown) => {
            waiting.delete(wait);
            reject(error);
          },
        );
      });
    },
  };
}
