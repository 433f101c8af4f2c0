import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, histogram } from '../metrics.js';

/** Why a delivery was not stored; the `reason` label of schoolbridge_webhook_rejected_total. */
export type RejectReason =
  | 'missing' | 'malformed' | 'mismatch' | 'stale' | 'future' | 'body' | 'too_large' | 'aborted' | 'method' | 'store' | 'error';

export interface IntakeMetrics {
  received: Counter;
  stored: Counter;
  duplicates: Counter;
  rejected: Counter<'reason'>;
  quarantined: Counter;
  ackSeconds: Histogram<'status'>;
}

export function createIntakeMetrics(registry: Registry): IntakeMetrics {
  return {
    received: counter(registry, 'schoolbridge_webhook_received_total', 'Webhook deliveries received on POST /webhooks/v2'),
    stored: counter(registry, 'schoolbridge_webhook_stored_total', 'Webhook events stored durably and enqueued'),
    duplicates: counter(registry, 'schoolbridge_webhook_duplicates_total', 'Webhook deliveries of an event already stored (answered 200)'),
    rejected: counter(registry, 'schoolbridge_webhook_rejected_total', 'Webhook deliveries not stored, by reason', ['reason']),
    quarantined: counter(registry, 'schoolbridge_webhook_quarantined_total', 'Correctly signed but stale deliveries put in quarantine'),
    ackSeconds: histogram(
      registry, 'schoolbridge_webhook_ack_seconds', 'Time from request to answer on POST /webhooks/v2', ['status'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
  };
}
