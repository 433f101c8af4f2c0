import type { Logger } from 'pino';
import type { OutboxEvents } from './events.js';
import type { OutboxMetrics } from './outbox-metrics.js';
import type { Settled } from './transitions.js';

/**
 * What a connector's batch came to, told once its outcomes are durable: metrics, a log line per
 * dead delivery, how many were delivered (`delivered`, before any event, so that a listener of an
 * event reads a count that includes it), and the outbox's events.
 */
export function reportSettled(
  to: { metrics: OutboxMetrics; log: Logger; events: OutboxEvents; now: number; delivered: (count: number) => void },
  connector: string,
  settled: readonly Settled[],
  startedAt: number,
): void {
  const { metrics, log, events, now } = to;
  metrics.duration.observe({ connector }, (now - startedAt) / 1000);
  const outcomes = { done: 0, retry: 0, dead: 0 };
  for (const result of settled) {
    outcomes[result.kind] += 1;
    if (result.kind === 'done') metrics.lag.observe({ connector }, Math.max(0, now - result.delivery.enqueuedAt) / 1000);
    if (result.kind === 'dead') log.warn({ id: result.delivery.id, error: result.delivery.lastError }, 'delivery dead');
  }
  to.delivered(outcomes.done);
  for (const [outcome, count] of Object.entries(outcomes)) if (count > 0) metrics.deliveries.inc({ connector, outcome }, count);
  for (const result of settled) {
    if (result.kind === 'done') events.emit('delivered', { delivery: result.delivery });
    else events.emit(result.kind, { delivery: result.delivery, error: result.error });
  }
}
