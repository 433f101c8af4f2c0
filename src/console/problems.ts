import { errorGroup, publicError } from '../outbox/index.js';
import { namesOf } from './names.js';
import type { ConsoleSources, Viewer } from './sources.js';

/** Dead deliveries read for grouping at most: a group's count says "at least" beyond it. */
const DEAD_READ = 10_000;
/** Names shown per group. */
const NAMES_SHOWN = 3;
/** Ids given per group (a script's retry by ids, the page's links). */
const IDS_GIVEN = 50;

export interface DeadGroup {
  connector: string;
  /** Our error code and the receiver's HTTP status: the group's key (what a group retry names). */
  error: string;
  count: number;
  /** The earliest last attempt of the group (epoch ms). */
  since?: number;
  ids: string[];
  names: string[];
  /** One delivery's whole error, with the receiver's words: to a viewer with the token only. */
  sample?: string;
}

export interface Problems {
  badge: 'red' | 'green';
  /** Why red, in words. */
  reasons: string[];
  dead: DeadGroup[];
  /** Whether DEAD_READ cut the list (counts are then at least what they say). */
  deadCut: boolean;
  retrying: { connector: string; count: number; nextRunAt: number; lastAttemptAt?: number; lastError: string }[];
  checks: { connector: string; ok: boolean; reason?: string }[];
  quarantined: { id: string; event: string; reason: string; receivedAt: string }[];
}

export async function problems(sources: ConsoleSources, viewer: Viewer): Promise<Problems> {
  // A store that cannot be read (PostgreSQL down) still leaves the page to say so, once per error.
  // One that answers nothing is not asked: the page says so at once rather than wait for it.
  const unread = new Map<string, string[]>();
  const down = sources.notAnswering?.();
  const read = <T>(what: string, reading: () => Promise<T>, none: T): Promise<T> =>
    (down === undefined ? reading() : Promise.reject(new Error(down))).catch((error: unknown) => {
      const message = (error as Error).message;
      unread.set(message, [...(unread.get(message) ?? []), what]);
      return none;
    });
  const [dead, retrying, connectors, quarantined] = await Promise.all([
    read('the dead deliveries', () => sources.outbox.list({ state: 'dead', limit: DEAD_READ }), []),
    read('the retrying deliveries', () => sources.store.outbox.retrying(), []),
    read('the connectors', () => sources.outbox.connectors(), []),
    read('the held deliveries', () => sources.quarantine(), []),
  ]);
  const groups = new Map<string, DeadGroup & { all: string[] }>();
  for (const d of dead) {
    const error = errorGroup(d.lastError ?? '');
    const key = `${d.connector}\u0000${error}`;
    let group = groups.get(key);
    if (!group) {
      group = { connector: d.connector, error, count: 0, ids: [], names: [], all: [], ...(viewer.authed && d.lastError ? { sample: d.lastError } : {}) };
      groups.set(key, group);
    }
    group.count += 1;
    if (group.ids.length < IDS_GIVEN) group.ids.push(d.id);
    if (group.all.length < NAMES_SHOWN) group.all.push(d.recordId);
    if (d.lastAttemptAt !== undefined) group.since = Math.min(group.since ?? Infinity, d.lastAttemptAt);
  }
  const names = await namesOf(sources.store.people, [...groups.values()].flatMap((g) => g.all));
  const deadGroups = [...groups.values()]
    .sort((a, b) => b.count - a.count || a.connector.localeCompare(b.connector))
    // An event's records (events, invoices) are named alike: each name once.
    .map(({ all, ...group }) => ({ ...group, names: [...new Set(all.map((id) => names.get(id) ?? id))] }));
  const checks = connectors.map((c) => ({ connector: c.name, ok: c.check.ok, ...(c.check.ok ? {} : { reason: c.check.reason }) }));
  const reasons = [
    // What keeps the daemon from working (the store cannot write, the upstream is down) first.
    ...sources.unready().map((u) => `${u.name}: ${u.reason}`),
    ...[...unread].map(([message, whats]) => `${inWords(whats)} could not be read: ${message}`),
    ...(dead.length > 0 ? [`${dead.length}${dead.length >= DEAD_READ ? '+' : ''} ${dead.length === 1 ? 'delivery' : 'deliveries'} failed for good`] : []),
    ...checks.filter((c) => !c.ok).map((c) => `connector ${c.connector} fails its check: ${c.reason}`),
  ];
  return {
    badge: reasons.length > 0 ? 'red' : 'green',
    reasons,
    dead: deadGroups,
    deadCut: dead.length >= DEAD_READ,
    retrying: retrying.map((r) => ({ ...r, lastError: viewer.authed ? r.lastError : publicError(r.lastError) })),
    checks,
    quarantined: quarantined.map((q) => ({ id: q.id, event: q.event, reason: q.reason, receivedAt: q.receivedAt })),
  };
}

/** "a", "a and b", "a, b and c". */
function inWords(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`;
}
