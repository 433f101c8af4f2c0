import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Component } from '../lifecycle.js';
import type { Store } from '../store/index.js';
import { createIntake, type EventSink, type Intake } from './intake.js';
import { createIntakeMetrics } from './intake-metrics.js';
import type { IntakeLoad } from './intake-load.js';
import { createEventOperator, type EventOperator } from './operator.js';
import { createInboxPruner, type InboxPruner } from './prune.js';
import type { WebhookApi } from './reconcile.js';
import { createReconciler, type Reconciler } from './reconciler.js';
import { registerWebhookRoute } from './route.js';

export type { EventSink, Intake, IntakeAnswer } from './intake.js';
export type { EventOperator, QuarantineSummary, ReleaseResult, ReprocessResult } from './operator.js';
export { summarize as summarizeQuarantine } from './operator.js';
export { notDeletedAnswer, type ReconcileResult, type WebhookApi } from './reconcile.js';
export { isMarkedDeleted, planReconcile, sameUrl, type ReconcilePlan, type WantedRegistrations } from './reconcile-plan.js';
export { REGISTRATIONS_KEY, type Reconciler, type RegistrationState } from './reconciler.js';
export { WEBHOOK_PATH } from './route.js';
export { createIntakeLoad, type IntakeLoad } from './intake-load.js';

export interface WebhooksOptions {
  config: Config['webhooks'];
  mode: 'daemon' | 'oneshot';
  http: FastifyInstance;
  store: Store;
  /** The outbox: stored events are enqueued in the same commit. */
  sink: EventSink;
  upstream: WebhookApi;
  /** Current signing secret first, then webhooks.previousSecrets. */
  secrets: readonly string[];
  callbackUrl: () => string;
  clock: Clock;
  log: Logger;
  metrics: Registry;
  random?: () => number;
  whenListening?: (signal: AbortSignal) => Promise<void>;
  /** Told of each delivery being handled (the outbox lets a burst of them go first). */
  load?: IntakeLoad;
  /** Told each delivery's outcome (`stored`, `duplicate`, `rejected:<reason>`, `quarantined`): the counts per hour. */
  count?: (label: string) => void;
}

/** Webhook intake and registration reconcile, built and wired as one part of the app. */
export interface Webhooks {
  intake: Intake;
  operator: EventOperator;
  reconciler: Reconciler;
  pruner: InboxPruner;
  /** To start in this order (and stop in reverse), before the server. */
  components: Component[];
}

export function createWebhooks(options: WebhooksOptions): Webhooks {
  const { config, store, sink, clock, log } = options;
  const metrics = createIntakeMetrics(options.metrics, options.count);
  const intake = createIntake({
    store: store.inbox, health: () => store.health(), sink, clock, metrics, secrets: options.secrets, toleranceSeconds: config.toleranceSeconds,
    log: log.child({ component: 'webhook-intake' }),
  });
  registerWebhookRoute(options.http, { intake, bodyLimitBytes: config.bodyLimitBytes, metrics, log: log.child({ component: 'webhook-intake' }), ...(options.load ? { load: options.load } : {}) });
  const operator = createEventOperator({ store: store.inbox, sink, clock, retentionHours: config.dedupeRetentionHours });
  const pruner = createInboxPruner({ store: store.inbox, clock, log: log.child({ component: 'webhook-inbox' }), retentionHours: config.dedupeRetentionHours });
  const reconciler = createReconciler({
    api: options.upstream,
    wanted: () => ({ events: config.events, callbackUrl: options.callbackUrl(), prune: config.prune }),
    clock,
    log: log.child({ component: 'webhook-reconciler' }),
    ...(options.random ? { random: options.random } : {}),
    onStart: options.mode === 'daemon' && config.reconcileOnStart,
    everyMs: config.reconcileEveryMinutes * 60_000,
    store: { roles: store.roles, state: store.state },
    ...(options.whenListening ? { whenListening: options.whenListening } : {}),
  });
  const components: Component[] = options.mode === 'daemon' ? [pruner, reconciler] : [reconciler];
  return { intake, operator, reconciler, pruner, components };
}
