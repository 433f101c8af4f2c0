import type { Webhook } from '../upstream/index.js';

/**
 * Which upstream registrations to create and delete so that each configured event has exactly one
 * registration with our callback URL. Pure. Rules:
 * - registrations with another callback URL are never touched (another system, or another daemon);
 * - entries marked deleted (`isDeleted`, `deletedAt`; whether the list shows them is "not shown") are ignored;
 * - of several of ours for one event, the lowest id (the oldest) is kept and the others deleted, always:
 *   duplicates only double the deliveries;
 * - ours for an event no longer configured are deleted only with `prune`.
 */
export interface WantedRegistrations {
  events: readonly string[];
  callbackUrl: string;
  prune: boolean;
}

export interface PlannedDeletion {
  webhook: Webhook;
  why: 'duplicate' | 'unlisted';
}

export interface ReconcilePlan {
  /** Event names to register. */
  create: string[];
  delete: PlannedDeletion[];
  /** Ours, already right. */
  keep: Webhook[];
  /** Live registrations of other callback URLs (left alone). */
  foreign: number;
}

export function planReconcile(existing: readonly Webhook[], wanted: WantedRegistrations): ReconcilePlan {
  const wantedEvents = [...new Set(wanted.events)];
  const live = uniqueById(existing.filter((webhook) => !isMarkedDeleted(webhook)));
  const ours = live.filter((webhook) => sameUrl(webhook.callbackUrl, wanted.callbackUrl)).sort((a, b) => a.id - b.id);
  const plan: ReconcilePlan = { create: [], delete: [], keep: [], foreign: live.length - ours.length };
  for (const event of wantedEvents) {
    const [first, ...rest] = ours.filter((webhook) => webhook.event === event);
    if (first) plan.keep.push(first);
    else plan.create.push(event);
    for (const webhook of rest) plan.delete.push({ webhook, why: 'duplicate' });
  }
  if (wanted.prune) {
    for (const webhook of ours) if (!wantedEvents.includes(webhook.event)) plan.delete.push({ webhook, why: 'unlisted' });
  }
  plan.delete.sort((a, b) => a.webhook.id - b.webhook.id);
  return plan;
}

export function isNoop(plan: ReconcilePlan): boolean {
  return plan.create.length === 0 && plan.delete.length === 0;
}

export function isMarkedDeleted(webhook: Webhook): boolean {
  const flag: unknown = webhook.isDeleted;
  if (flag === true || flag === 1 || flag === '1' || flag === 'true') return true;
  return typeof webhook.deletedAt === 'string' && webhook.deletedAt.trim() !== '';
}

/**
 * URLs compared as URLs: scheme and host case, default ports, dot segments, a trailing slash, an
 * empty query (`?`) and a fragment (never sent) do not make a registration foreign. A service that
 * stores our callback URL so would otherwise have every reconcile register it again (the route takes
 * it so too).
 */
export function sameUrl(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return delivered(new URL(a)) === delivered(new URL(b));
  } catch {
    return false;
  }
}

/** What of a URL reaches the route: no trailing slash, no empty query, no fragment. */
function delivered(url: URL): string {
  url.pathname = url.pathname.replace(/\/+$/, '') || '/';
  // An empty search keeps its `?` in href until it is set.
  if (url.search === '') url.search = '';
  url.hash = '';
  return url.href;
}

/** The same id listed twice is one registration (a list taken while it changed). */
function uniqueById(webhooks: Webhook[]): Webhook[] {
  const seen = new Set<number>();
  return webhooks.filter((webhook) => (seen.has(webhook.id) ? false : (seen.add(webhook.id), true)));
}
