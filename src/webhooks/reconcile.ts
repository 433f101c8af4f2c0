import type { Logger } from 'pino';
import { BridgeError } from '../errors.js';
import type { UpstreamClient, Webhook } from '../upstream/index.js';
import { isMarkedDeleted, planReconcile, type ReconcilePlan, type WantedRegistrations } from './reconcile-plan.js';

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
  try {
    for (const event of plan.create) {
      const webhook = await api.registerWebhook(event, wanted.callbackUrl, opts);
      options.log?.info({ id: webhook.id, event, callbackUrl: wanted.callbackUrl }, `webhook registered: ${event} → ${wanted.callbackUrl}`);
      result.created.push(webhook);
    }
    const notFound: number[] = [];
    for (const { webhook, why } of plan.delete) {
      if (!(await deleteIfPresent(api, webhook.id, opts))) notFound.push(webhook.id);
      options.log?.info({ id: webhook.id, event: webhook.event, why }, 'webhook registration deleted');
      result.deleted.push(webhook.id);
    }
    if (notFound.length > 0) await confirmGone(api, notFound, opts);
  } catch (error) {
    throw withWhatWasDone(error, result, plan);
  }
  return result;
}

/**
 * A failure halfway names what was changed before it: the registrations made and deleted stay so,
 * and the operator who reads only the error (a command logs no progress) would not know.
 */
function withWhatWasDone(error: unknown, result: ReconcileResult, plan: ReconcilePlan): unknown {
  const done = [
    ...result.created.map((w) => `registered #${w.id} ${w.event}`),
    ...result.deleted.map((id) => `deleted #${id} ${plan.delete.find((d) => d.webhook.id === id)?.webhook.event ?? ''}`.trimEnd()),
  ];
  if (done.length === 0 || !(error instanceof BridgeError)) return error;
  return new BridgeError(error.code, `${error.message} (before that it ${done.join(', ')}; run it again to finish)`, {
    retryable: error.retryable,
    cause: error,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.context === undefined ? {} : { context: error.context }),
  });
}

/** Deletes a registration; false when the upstream answered 404 (gone already, as we want, or so it says). */
async function deleteIfPresent(api: WebhookApi, id: number, opts: { signal?: AbortSignal }): Promise<boolean> {
  try {
    await api.deleteWebhook(id, opts);
    return true;
  } catch (error) {
    if (error instanceof BridgeError && error.code === 'upstream.not_found') return false;
    throw error;
  }
}

/**
 * A 404 to a delete is taken for "gone already" only once the list agrees: a 404 from something
 * else on the way (a proxy, a wrong path under upstream.baseUrl) would otherwise pass for a deletion
 * while the registration stays, and every event would go on arriving twice.
 */
async function confirmGone(api: WebhookApi, ids: readonly number[], opts: { signal?: AbortSignal }): Promise<void> {
  const listed = new Set((await api.listWebhooks(opts)).filter((w) => !isMarkedDeleted(w)).map((w) => w.id));
  const still = ids.filter((id) => listed.has(id));
  if (still.length === 0) return;
  throw new BridgeError('webhooks.not_deleted', `the upstream answered 404 to deleting registration ${still.map((id) => `#${id}`).join(', ')} but still lists it: is upstream.baseUrl the service's base URL, with nothing between that answers for it?`, { retryable: true });
}
