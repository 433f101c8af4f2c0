import type { DeletedWebhook, Webhook } from './types.js';

/**
 * Webhook registrations. Deleted ones are kept (so a second delete is a 404, not a crash) but are not
 * listed and get no deliveries. Several registrations of one event and URL are allowed, as upstream.
 */
export const EVENT_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*\.[A-Za-z][A-Za-z0-9_-]*$/;

export function isCallbackUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export interface WebhookRegistry {
  register(event: string, callbackUrl: string, now: string): Webhook;
  remove(id: number, now: string): DeletedWebhook | undefined;
  list(): Webhook[];
  forEvent(event: string): Webhook[];
  /** Every registration, deleted ones too, and the next id (the sandbox's document). */
  saved(): SavedWebhooks;
  restore(saved: SavedWebhooks): void;
}

export interface SavedWebhooks {
  nextId: number;
  webhooks: (Webhook & { deletedAt: string | null })[];
}

export function createWebhookRegistry(changed: () => void = () => {}): WebhookRegistry {
  const webhooks: (Webhook & { deletedAt: string | null })[] = [];
  let nextId = 1;
  const view = ({ id, event, callbackUrl, createdAt, updatedAt }: Webhook): Webhook => ({ id, event, callbackUrl, createdAt, updatedAt });
  const live = () => webhooks.filter((webhook) => webhook.deletedAt === null);

  return {
    register(event, callbackUrl, now) {
      const webhook = { id: nextId++, event, callbackUrl, createdAt: now, updatedAt: now, deletedAt: null };
      webhooks.push(webhook);
      changed();
      return view(webhook);
    },
    remove(id, now) {
      const webhook = webhooks.find((candidate) => candidate.id === id && candidate.deletedAt === null);
      if (!webhook) return undefined;
      webhook.deletedAt = now;
      webhook.updatedAt = now;
      changed();
      return { id, isDeleted: true, deletedAt: now };
    },
    list: () => live().map(view),
    forEvent: (event) => live().filter((webhook) => webhook.event === event).map(view),
    saved: () => ({ nextId, webhooks }),
    restore(saved) {
      webhooks.length = 0;
      webhooks.push(...structuredClone(saved.webhooks));
      nextId = saved.nextId;
    },
  };
}
