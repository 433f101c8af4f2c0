import type { EntryStatus, OutboxEntry } from './entry.js';

export interface ListFilter {
  /** `pending` includes entries in flight (`active`). */
  state?: 'pending' | 'active' | 'dead';
  connector?: string;
}

export interface ListedEntry extends OutboxEntry {
  /** The older entry of the same connector and order key this one waits behind. */
  waitingFor?: string;
}

const MATCHES: Record<NonNullable<ListFilter['state']>, readonly EntryStatus[]> = {
  pending: ['pending', 'active'],
  active: ['active'],
  dead: ['dead'],
};

/** The outbox as `deliveries list` shows it: filtered, in detection order, each with what it waits for. */
export function listEntries(entries: Iterable<OutboxEntry>, filter: ListFilter = {}): ListedEntry[] {
  const all = [...entries].sort((a, b) => a.seq - b.seq);
  const heads = new Map<string, string>();
  const out: ListedEntry[] = [];
  for (const entry of all) {
    const group = `${entry.connector}\u0000${entry.order}`;
    const head = heads.get(group);
    if (head === undefined) heads.set(group, entry.id);
    if (filter.connector !== undefined && entry.connector !== filter.connector) continue;
    if (filter.state !== undefined && !MATCHES[filter.state].includes(entry.status)) continue;
    out.push(head === undefined ? entry : { ...entry, waitingFor: head });
  }
  return out;
}
