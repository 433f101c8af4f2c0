import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { HealthState } from './health.js';

/**
 * Beats this replica's heartbeat into the store every `intervalMs`, every second while the store
 * cannot write: the beat is a write, so it is also what finds out that the store can write again.
 */
export function startHeartbeat(options: {
  beat: () => Promise<void>;
  health: HealthState;
  clock: Clock;
  log: Logger;
  intervalMs: number;
}): { stop(): Promise<void> } {
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const wait = options.health.current().ok ? options.intervalMs : 1000;
      try {
        await options.clock.sleep(wait, stopping.signal);
      } catch {
        return;
      }
      try {
        await options.beat();
      } catch (error) {
        options.log.debug({ err: describeError(error) }, 'heartbeat not written');
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
