import { z } from 'zod';
import type { ListedDelivery } from '../store/index.js';
import type { Outbox } from './outbox.js';
import { errorGroup } from './public-error.js';

/**
 * What the admin API (`POST /admin/deliveries/retry`, `POST /admin/deliveries/list`) and the CLI's
 * way through it do with the outbox, so the routes stay one line each: validate the body, call the
 * outbox, answer `{ status, body }`.
 */
const retryBody = z.union([
  z.strictObject({ id: z.string().min(1) }),
  z.strictObject({ ids: z.array(z.string().min(1)).min(1).max(10_000) }),
  /** A group of the console's problems: the dead deliveries of a connector failing with one error (publicError). */
  z.strictObject({ group: z.strictObject({ connector: z.string().min(1), error: z.string() }) }),
  z.strictObject({ allDead: z.literal(true), connector: z.string().min(1).optional() }),
]);

const listBody = z.strictObject({
  state: z.enum(['pending', 'active', 'dead']).optional(),
  connector: z.string().min(1).optional(),
});

export type AdminAnswer<T> = { status: 200; body: T } | { status: 400 | 404; body: { error: string } };

export async function adminRetry(outbox: Outbox, body: unknown): Promise<AdminAnswer<{ retried: string[] }>> {
  const parsed = retryBody.safeParse(body ?? {});
  if (!parsed.success) {
    return { status: 400, body: { error: 'send {"id":"<delivery id>"}, {"ids":[…]}, {"group":{"connector":"<name>","error":"<error>"}} or {"allDead":true,"connector"?:"<name>"}' } };
  }
  if ('ids' in parsed.data) return { status: 200, body: { retried: await outbox.retryIds(parsed.data.ids) } };
  if ('group' in parsed.data) {
    const { connector, error } = parsed.data.group;
    const dead = await outbox.list({ state: 'dead', connector });
    return { status: 200, body: { retried: await outbox.retryIds(dead.filter((d) => errorGroup(d.lastError ?? '') === error).map((d) => d.id)) } };
  }
  if ('id' in parsed.data) {
    const entry = await outbox.retry(parsed.data.id);
    return entry ? { status: 200, body: { retried: [entry.id] } } : { status: 404, body: { error: `no delivery "${parsed.data.id}"` } };
  }
  return { status: 200, body: { retried: await outbox.retryAllDead(parsed.data.connector) } };
}

export async function adminList(outbox: Outbox, body: unknown): Promise<AdminAnswer<{ deliveries: ListedDelivery[] }>> {
  const parsed = listBody.safeParse(body ?? {});
  if (!parsed.success) return { status: 400, body: { error: 'send {"state"?: "pending"|"active"|"dead", "connector"?: "<name>"}' } };
  return { status: 200, body: { deliveries: await outbox.list(parsed.data) } };
}
