import { systemClock, type Clock } from '../../src/clock.js';

/** 2026-11-22T10:00:00Z: the time tests start at unless they say otherwise. */
export const TEST_NOW_MS = Date.UTC(2026, 10, 22, 10, 0, 0);

/** The one clock tests move by hand. */
export interface TestClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
  /** Every sleep asked for, in ms. */
  readonly slept: number[];
}

/**
 * What `sleep` does:
 * - `hold`: never ends by itself (the test drives time; stop() aborts it);
 * - `instant`: time jumps by the sleep and it ends on a later turn, so a loop of sleeps cannot starve I/O;
 * - `resolve`: ends at once, time unmoved;
 * - `real`: waits for real, time unmoved;
 * - `timers`: ends once `advance` moves time past it (one already due ends on the next turn, as a
 *   real timer of 0 ms would), in time order.
 */
export type SleepMode = 'hold' | 'instant' | 'resolve' | 'real' | 'timers';

export function testClock(start = TEST_NOW_MS, options: { sleep?: SleepMode } = {}): TestClock {
  const mode = options.sleep ?? 'real';
  let now = start;
  const slept: number[] = [];
  let timers: { at: number; seq: number; resolve: () => void }[] = [];
  let seq = 0;
  const advance = (ms: number) => {
    now += ms;
    const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    timers = timers.filter((t) => t.at > now);
    for (const timer of due) timer.resolve();
  };
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance,
    slept,
    sleep(ms, signal) {
      slept.push(ms);
      if (signal?.aborted) return Promise.reject(signal.reason);
      switch (mode) {
        case 'real':
          return systemClock.sleep(ms, signal);
        case 'resolve':
          return Promise.resolve();
        case 'instant':
          now += ms;
          return new Promise((resolve, reject) => setImmediate(() => (signal?.aborted ? reject(signal.reason) : resolve())));
        case 'timers':
          return new Promise<void>((resolve, reject) => {
            const timer = { at: now + Math.max(0, ms), seq: seq++, resolve };
            timers.push(timer);
            if (ms <= 0) setImmediate(() => advance(0));
            signal?.addEventListener('abort', () => {
              timers = timers.filter((t) => t !== timer);
              reject(signal.reason);
            }, { once: true });
          });
        case 'hold':
          return new Promise<void>((_resolve, reject) => {
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          });
      }
    },
  };
}
