/**
 * A sliding-window request limiter per connector instance: Google counts requests per minute per
 * user, so we keep the start times of the last minute's requests and wait until one ages out.
 * A 429 pauses the limiter, so the next delivery does not spend another request to learn the same.
 */
import type { Clock } from '../../src/clock.js';

export const WINDOW_MS = 60_000;

/** How long to wait before one more request may start; `history` holds recent start times, ascending. */
export function waitTime(history: readonly number[], now: number, limit: number, pausedUntil: number, windowMs = WINDOW_MS): number {
  const recent = history.filter((t) => t > now - windowMs);
  const byWindow = recent.length < limit ? 0 : recent[recent.length - limit]! + windowMs - now;
  return Math.max(0, byWindow, pausedUntil - now);
}

export interface Limiter {
  /** Resolves when a request may start (and records it); rejects when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void>;
  pause(ms: number): void;
}

export function createLimiter(perMinute: number, clock: Clock): Limiter {
  let history: number[] = [];
  let pausedUntil = 0;
  // Callers are serialised so two deliveries cannot both see a free slot and overshoot.
  let queue: Promise<void> = Promise.resolve();
  const take = async (signal?: AbortSignal) => {
    for (;;) {
      signal?.throwIfAborted();
      const now = clock.now();
      const wait = waitTime(history, now, perMinute, pausedUntil);
      if (wait === 0) {
        history = history.filter((t) => t > now - WINDOW_MS);
        history.push(now);
        return;
      }
      await clock.sleep(wait, signal);
    }
  };
  return {
    acquire(signal) {
      const turn = queue.then(() => take(signal));
      queue = turn.catch(() => undefined);
      return turn;
    },
    pause(ms) {
      pausedUntil = Math.max(pausedUntil, clock.now() + ms);
    },
  };
}
