import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { HealthState } from './health.js';
import type { StoreHealth } from './port.js';

/**
 * How long a beat may go unanswered before the store counts as unable to write: a database that
 * froze, a network cut or a disk that hangs fails nothing and answers nothing, and the calls waiting
 * for it would wait for as long as the connection's TCP time-out (minutes), /readyz saying ready.
 */
export const STALL_MS = 10_000;

const NOT_ANSWERING = 'the store has not answered for';

/**
 * Whether the store is unhealthy because it answers nothing (a beat went unanswered), not because
 * it refuses writes: then whatever waits for it waits until it is back, reads too.
 */
export function notAnswering(health: StoreHealth): boolean {
  return !health.ok && health.reason.startsWith(NOT_ANSWERING);
}

/**
 * Beats this replica's heartbeat into the store every `intervalMs`, every second while the store
 * cannot write: the beat is a write, so it is also what finds out that the store can write again.
 * A beat unanswered for `stallMs` makes the store unhealthy until a write succeeds (that beat's own,
 * once the store answers again).
 */
export function startHeartbeat(options: {
  beat: () => Promise<void>;
  health: HealthState;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  stallMs?: number;
}): { stop(): Promise<void> } {
  const stallMs = options.stallMs ?? STALL_MS;
  const stopping = new AbortController();
  const stopped = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const wait = options.health.current().ok ? options.intervalMs : 1000;
      try {
        await options.clock.sleep(wait, stopping.signal);
      } catch {
        return;
      }
      const answered = new AbortController();
      void options.clock.sleep(stallMs, answered.signal).then(
        () => options.health.failed(`${NOT_ANSWERING} ${stallMs / 1000} s`, options.clock.now()),
        () => {},
      );
      // A stop does not wait for a beat the store does not answer: the store closes its connections after.
      const beat = options.beat().catch((error: unknown) => options.log.debug({ err: describeError(error) }, 'heartbeat not written'));
      try {
        await Promise.race([beat, stopped]);
      } finally {
        answered.abort();
      }
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
