import type { Logger } from 'pino';
import { BridgeError } from '../errors.js';
import type { UpstreamClient, Webhook } from '../upstream/index.js';
import { planReconcile, type ReconcilePlan, type WantedRegistrations } from './reconcile-plan.js';

export type WebhookApi = Pick<UpstreamClient, 'listWebhooks' | 'registerWebhook' | 'deleteWebhook'>;

export interface ReconcileResult {
  plan: ReconcilePlan;
  dryRun: boolean;
  created: Webhook[];
  /** Ids deleted (or found already gone). */
  deleted: number[];
}

/**
 * Lists the registrations, plans, and applies the plan: creations first, so an event is never left
 * without a registration in between, then deletions. Safe to run again after any failure: it starts
 * from a fresh list, so a creation whose answer was lost shows up as ours and a duplicate is removed.
 */
export async function reconcileWebhooks(
  api: WebhookApi,
  wanted: WantedRegistrations,
  options: { dryRun?: boolean; signal?: AbortSignal; log?: Logger } = {},
): Promise<ReconcileResult> {
  const opts = options.signal ? { signal: options.signal } : {};
  const plan = planReconcile(await api.listWebhooks(opts), wanted);
  const result: ReconcileResult = { plan, dryRun: options.dryRun === true, created: [], deleted: [] };
  if (options.dryRun) return result;
  for (const event of plan.create) {
    const webhook = await api.registerWebhook(event, wanted.callbackUrl, opts);
    options.log?.info({ id: webhook.id, event, callbackUrl: wanted.callbackUrl }, `webhook registered: ${event} → ${wanted.callbackUrl}`);
    result.created.push(webhook);
  }
  for (const { webhook, why } of plan.delete) {
    await deleteIfPresent(api, webhook.id, opts);
    options.log?.info({ id: webhook.id, event: webhook.event, why }, 'webhook registration deleted');
    result.deleted.push(webhook.id);
  }
  return result;
}

/** A registration already gone (404) is what we wanted. */
async function deleteIfPresent(api: WebhookApi, id: number, opts: { signal?: AbortSignal }): Promise<void> {
  try {
    await api.deleteWebhook(id, opts);
  } catch (error) {
    if (error instanceof BridgeError && error.code === 'upstream.not_found') return;
    throw error;
  }
}
