import { z } from 'zod';
import type { ListedDelivery } from '../store/index.js';
import type { Outbox } from './outbox.js';
import type { OwedRange } from './owed-ranges.js';
import { errorGroup } from './public-error.js';
import { retryAndReport, type RetryReport, type RetryTarget } from './retry-report.js';

/**
 * What the admin API (`POST /admin/deliveries/retry`, `POST /admin/deliveries/list`) and the CLI's
 * way through it do with the outbox, so the routes stay one line each: their bodies' schemas (checked
 * by the routes, http/admin-routes.ts withBody), and the outbox's answer as `{ status, body }`.
 */
export const retryBody = z.union([
  z.strictObject({ id: z.string().min(1) }),
  z.strictObject({ ids: z.array(z.string().min(1)).min(1).max(10_000) }),
  /** A group of the console's problems: the dead deliveries of a connector failing with one error (publicError). */
  z.strictObject({ group: z.strictObject({ connector: z.string().min(1), error: z.string() }) }),
  z.strictObject({ allDead: z.literal(true), connector: z.string().min(1).optional() }),
]);
export const RETRY_USAGE = '{"id":"<delivery id>"}, {"ids":[…]}, {"group":{"connector":"<name>","error":"<error>"}} or {"allDead":true,"connector"?:"<name>"}';

export const listBody = z.strictObject({
  state: z.enum(['pending', 'active', 'dead']).optional(),
  connector: z.string().min(1).optional(),
});
export const LIST_USAGE = '{"state"?: "pending"|"active"|"dead", "connector"?: "<name>"}';

export type AdminAnswer<T> = { status: 200; body: T } | { status: 404; body: { error: string; message: string } };

/** How long the daemon waits for the retried deliveries' outcomes before it answers. */
export const RETRY_WAIT_MS = 120_000;

/** Retries and answers once every retried delivery has an outcome (bounded): the CLI exits 1 unless all were delivered. */
export async function adminRetry(outbox: Outbox, body: z.infer<typeof retryBody>, waitMs = RETRY_WAIT_MS): Promise<AdminAnswer<RetryReport>> {
  const target = await targetOf(outbox, body);
  const report = await retryAndReport(outbox, target, waitMs);
  return report ? { status: 200, body: report } : { status: 404, body: { error: 'outbox.not_found', message: `no delivery "${'id' in target ? target.id : ''}"` } };
}

/** A group of the console's problems is the ids of its dead deliveries as they are now. */
async function targetOf(outbox: Outbox, body: z.infer<typeof retryBody>): Promise<RetryTarget> {
  if ('group' in body) {
    const { connector, error } = body.group;
    return { ids: await outbox.deadIds(connector, (d) => errorGroup(d.lastError ?? '') === error) };
  }
  if ('allDead' in body) return { allDead: true, ...(body.connector ? { connector: body.connector } : {}) };
  return body;
}

export async function adminList(outbox: Outbox, body: z.infer<typeof listBody>): Promise<AdminAnswer<{ deliveries: ListedDelivery[]; owed?: OwedRange[] }>> {
  const [deliveries, owed] = await Promise.all([outbox.list(body), outbox.owedRanges(body)]);
  // An empty list for a name that is no connector at all would read as "nothing owed".
  const unknown = deliveries.length === 0 && owed.length === 0 && body.connector !== undefined ? await outbox.unknown(body.connector) : undefined;
  if (unknown) return { status: 404, body: { error: 'outbox.not_found', message: unknown } };
  return { status: 200, body: { deliveries, ...(owed.length > 0 ? { owed } : {}) } };
}
