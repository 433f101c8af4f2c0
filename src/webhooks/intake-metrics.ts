import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, histogram } from '../metrics.js';

/** Why a delivery was not stored; the `reason` label of schoolbridge_webhook_rejected_total. */
export type RejectReason =
  | 'missing' | 'malformed' | 'mismatch' | 'stale' | 'future' | 'body' | 'too_large' | 'encoding' | 'aborted' | 'method' | 'store' | 'error';

export interface IntakeMetrics {
  received: Counter;
  stored: Counter;
  duplicates: Counter;
  rejected: Counter<'reason'>;
  quarantined: Counter;
  ackSeconds: Histogram<'status'>;
}

/**
 * A counter that also tells `count` each increment, by a label: the console's counts per hour
 * (`stored`, `duplicate`, `rejected:<reason>`, `quarantined`) follow the metrics exactly.
 */
function tee<T extends string>(c: Counter<T>, count: ((label: string) => void) | undefined, label: (labels?: Partial<Record<T, string | number>>) => string): Counter<T> {
  if (!count) return c;
  const inc = c.inc.bind(c) as (...args: unknown[]) => void;
  c.inc = ((...args: unknown[]) => {
    inc(...args);
    count(label(typeof args[0] === 'object' ? (args[0] as Partial<Record<T, string | number>>) : undefined));
  }) as Counter<T>['inc'];
  return c;
}

export function createIntakeMetrics(registry: Registry, count?: (label: string) => void): IntakeMetrics {
  return {
    received: counter(registry, 'schoolbridge_webhook_received_total', 'Webhook deliveries received on POST /webhooks/v2'),
    stored: tee(counter(registry, 'schoolbridge_webhook_stored_total', 'Webhook events stored durably and enqueued'), count, () => 'stored'),
    duplicates: tee(counter(registry, 'schoolbridge_webhook_duplicates_total', 'Webhook deliveries of an event already stored (answered 200)'), count, () => 'duplicate'),
    rejected: tee(counter(registry, 'schoolbridge_webhook_rejected_total', 'Webhook deliveries not stored, by reason', ['reason']), count,
      (labels) => `rejected:${labels?.reason ?? 'error'}`),
    quarantined: tee(counter(registry, 'schoolbridge_webhook_quarantined_total', 'Correctly signed but stale deliveries put in quarantine'), count, () => 'quarantined'),
    ackSeconds: histogram(
      registry, 'schoolbridge_webhook_ack_seconds', 'Time from request to answer on POST /webhooks/v2', ['status'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
  };
}
