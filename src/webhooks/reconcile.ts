import type { Logger } from 'pino';
import { BridgeError, reworded } from '../errors.js';
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
    const answered: number[] = [];
    for (const { webhook, why } of plan.delete) {
      if (!(await deleteIfPresent(api, webhook.id, opts))) {
        notFound.push(webhook.id);
        continue;
      }
      options.log?.info({ id: webhook.id, event: webhook.event, why }, 'webhook registration deleted');
      answered.push(webhook.id);
      result.deleted.push(webhook.id);
    }
    if (notFound.length + answered.length > 0) await confirmGone(api, { notFound, answered }, opts, result);
    result.deleted.push(...notFound);
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
  return reworded(error, `${error.message} (before that it ${done.join(', ')}; run it again to finish)`);
}

/**
 * Deletes a registration; false when the upstream answered 404 (gone already, as we want, or so it
 * says). An answer that says it was not deleted (`isDeleted: false`) is a failure.
 */
async function deleteIfPresent(api: WebhookApi, id: number, opts: { signal?: AbortSignal }): Promise<boolean> {
  try {
    const answer = await api.deleteWebhook(id, opts);
    if (answer.isDeleted === false) throw notDeletedAnswer(id);
    return true;
  } catch (error) {
    if (error instanceof BridgeError && error.code === 'upstream.not_found') return false;
    throw error;
  }
}

/** The upstream's own answer to a delete says it did not delete the registration. */
export function notDeletedAnswer(id: number): BridgeError {
  return new BridgeError('webhooks.not_deleted', `the upstream answered that registration #${id} was not deleted (isDeleted: false)`, { retryable: true });
}

/**
 * Deletions are taken for done only once the list agrees. A 404 from something else on the way (a
 * proxy, a wrong path under upstream.baseUrl) would otherwise pass for "gone already", and an
 * answer of "deleted" from a service that kept the registration for one; either way every event
 * would go on arriving twice.
 */
async function confirmGone(api: WebhookApi, ids: { notFound: readonly number[]; answered: readonly number[] }, opts: { signal?: AbortSignal }, result: ReconcileResult): Promise<void> {
  const listed = new Set((await api.listWebhooks(opts)).filter((w) => !isMarkedDeleted(w)).map((w) => w.id));
  const names = (list: readonly number[]) => list.map((id) => `#${id}`).join(', ');
  const missing = ids.notFound.filter((id) => listed.has(id));
  if (missing.length > 0) {
    throw new BridgeError('webhooks.not_deleted', `the upstream answered 404 to deleting registration ${names(missing)} but still lists it: is upstream.baseUrl the service's base URL, with nothing between that answers for it?`, { retryable: true });
  }
  const kept = ids.answered.filter((id) => listed.has(id));
  if (kept.length === 0) return;
  // Not deleted after all: the failure's account of what was done leaves them out.
  result.deleted = result.deleted.filter((id) => !kept.includes(id));
  throw new BridgeError('webhooks.not_deleted', `the upstream answered that it deleted registration ${names(kept)} but still lists it: a registration it keeps goes on sending every event twice; delete it in the service, or ask its maintainers`, { retryable: true });
}
