import { orderKeyOf, publicError } from '../outbox/index.js';
import type { Stream } from '../records.js';
import type { Attempt, CreatedRange, InboxEntry, ListedDelivery, Person, Run, SnapshotStream } from '../store/index.js';
import { compareKeys } from '../streams/index.js';
import { storedKeyOf } from '../webhooks/event-body.js';
import { inboxIdOf } from '../webhooks/event-identity.js';
import { personRefOf, recordLabel } from './names.js';
import type { ConsoleSources, Viewer } from './sources.js';
import type { TrailState } from './words.js';

/** People and events a search gives at most; attempts read per subject at most. */
const SUBJECTS = 10;
/** Digits from which a query of digits alone is also looked for anywhere in an event's body, not only as its id. */
const DIGITS_ANYWHERE = 6;
const ATTEMPTS = 200;
const DAY_MS = 86_400_000;

export interface ConnectorTrail {
  connector: string;
  state: TrailState;
  /** When it will be tried again (retrying), or the delivery it waits behind (waiting). */
  nextRunAt?: number;
  waitingFor?: string;
  attempts: Omit<Attempt, 'recordId' | 'connector' | 'enqueuedAt'>[];
}

export interface RecordTrail {
  recordId: string;
  label: string;
  /** Where it came from: the poll cycle that found the change, or the webhook delivery. */
  origin: { kind: 'poll'; at: number; runId?: number; trigger?: string } | { kind: 'webhook'; at: number; verified: true; event: string; reprocessed: number } | { kind: 'unknown' };
  connectors: ConnectorTrail[];
}

export type Subject =
  | { kind: 'person'; stream: SnapshotStream; key: number; name: string; email?: string; userId?: number; records: RecordTrail[] }
  | { kind: 'event'; id: string; event: string; receivedAt: number; records: RecordTrail[] };

const EVENT_RECORD = /^(events|invoices):/;

/** A delivery id as the status page and `deliveries list` show it (`<connector>:<record id>`) names its record. */
function recordIdOf(q: string): string {
  const rest = q.slice(q.indexOf(':') + 1);
  return q.includes(':') && (personRefOf(rest) !== undefined || EVENT_RECORD.test(rest)) ? rest : q;
}

/** What a search finds: people (from the snapshot's names) and webhook events (from their bodies). */
export async function findRecords(sources: ConsoleSources, query: string, viewer: Viewer): Promise<{ query: string; subjects: Subject[] }> {
  // A control character (a NUL from `%00`) would cut a LIKE pattern short, to one that matches all.
  // eslint-disable-next-line no-control-regex
  const q = query.replace(/[\u0000-\u001f\u007f]/g, ' ').trim().slice(0, 200);
  if (q === '') return { query: q, subjects: [] };
  const { people, inbox } = sources.store;
  let found: Person[] = [];
  let events: InboxEntry[] = [];
  const recordId = recordIdOf(q);
  const person = personRefOf(recordId);
  if (person) {
    found = await people.get([person]);
    if (found.length === 0) found = [{ ...person, chain: '', name: '' }];
  } else if (EVENT_RECORD.test(recordId)) {
    const entry = await inbox.get(inboxIdOf(recordId));
    events = entry ? [entry] : [];
  } else if (/^\d{1,15}$/.test(q)) {
    // An event's object by its id; a longer number (a phone, an invoice number, a PESEL) anywhere too.
    const anywhere = q.length >= DIGITS_ANYWHERE ? [q] : [];
    [found, events] = await Promise.all([people.search({ id: Number(q) }, SUBJECTS), inbox.search([`"id":${q},`, `"id":${q}}`, `"id":"${q}"`, ...anywhere], SUBJECTS)]);
  } else {
    [found, events] = await Promise.all([people.search({ text: q }, SUBJECTS), inbox.search([q], SUBJECTS)]);
  }
  const [runs, ranges] = await Promise.all([
    sources.store.history.runs({ since: sources.clock.now() - (sources.historyDays + 1) * DAY_MS, limit: 5000 }),
    found.length > 0 ? sources.store.outbox.ranges() : [],
  ]);
  const subjects: Subject[] = [];
  for (const p of found) {
    // A first cycle's created change still owed by a range is no row yet: named by the person's chain.
    const owed = p.chain === '' ? [] : ranges.filter((r) => r.stream === p.stream && (r.after === undefined || compareKeys(p.key, r.after) > 0) && compareKeys(p.key, r.upto) <= 0);
    const records = await trails(sources, viewer, runs, {
      prefix: `${p.stream}:${p.key}:`, orderKey: `${p.stream}:${p.key}`, stream: p.stream, owed: owed.length === 0 ? undefined : { recordId: `${p.stream}:${p.key}:${p.chain}`, ranges: owed },
    });
    subjects.push({ kind: 'person', stream: p.stream, key: p.key, name: p.name, ...(p.email ? { email: p.email } : {}), ...(p.userId === undefined ? {} : { userId: p.userId }), records });
  }
  for (const e of events) {
    const records = await trails(sources, viewer, runs, { recordIds: e.recordIds, entry: e });
    subjects.push({ kind: 'event', id: e.id, event: e.event, receivedAt: e.receivedAtMs, records });
  }
  return { query: q, subjects };
}

type TrailQuery = { prefix: string; orderKey: string; stream: Stream; owed: { recordId: string; ranges: CreatedRange[] } | undefined } | { recordIds: readonly string[]; entry: InboxEntry };

async function trails(sources: ConsoleSources, viewer: Viewer, runs: readonly Run[], query: TrailQuery): Promise<RecordTrail[]> {
  const { history, outbox } = sources.store;
  const [attempts, deliveries] = await Promise.all([
    history.attempts('prefix' in query ? { prefixes: [query.prefix], limit: ATTEMPTS } : { recordIds: query.recordIds, limit: ATTEMPTS }),
    'prefix' in query
      ? outbox.lookup({ keys: sources.outbox.subscribers(query.stream).map((connector) => ({ connector, orderKey: query.orderKey })) })
      : eventDeliveries(sources, query.entry, query.recordIds),
  ]);
  const ids = new Set<string>('prefix' in query ? (query.owed ? [query.owed.recordId] : []) : query.recordIds);
  const owed = 'prefix' in query ? query.owed : undefined;
  for (const a of attempts) ids.add(a.recordId);
  for (const d of deliveries) ids.add(d.recordId);
  const out: RecordTrail[] = [];
  for (const recordId of ids) {
    const mine = attempts.filter((a) => a.recordId === recordId).sort((a, b) => a.at - b.at);
    const queued = deliveries.filter((d) => d.recordId === recordId);
    const connectors = new Set([...sources.outbox.subscribers(streamOf(recordId)), ...mine.map((a) => a.connector), ...queued.map((d) => d.connector)]);
    const fromRange = owed?.recordId === recordId ? owed.ranges : [];
    const enqueuedAt = Math.min(...mine.map((a) => a.enqueuedAt), ...queued.map((d) => d.enqueuedAt), ...fromRange.map((r) => Date.parse(r.detectedAt)));
    out.push({
      recordId,
      label: recordLabel(recordId),
      origin: 'entry' in query ? { kind: 'webhook', at: query.entry.receivedAtMs, verified: true, event: query.entry.event, reprocessed: query.entry.reprocessed } : pollOrigin(runs, enqueuedAt),
      connectors: [...connectors].sort().map((c) => connectorTrail(c, mine.filter((a) => a.connector === c), queued.find((d) => d.connector === c), fromRange.find((r) => r.connector === c), viewer)),
    });
  }
  // Newest first: the change a person is looking for is usually the last.
  return out.sort((a, b) => originAt(b) - originAt(a));
}

const originAt = (t: RecordTrail) => (t.origin.kind === 'unknown' ? 0 : t.origin.at);
/**
 * An event's deliveries still queued, looked up by their records' order keys and kept by id: a
 * store finds a key's deliveries in one part of its delivery log, where an id names no part
 * (docs/store.md). The key is read from the stored body again; one that no longer reads is looked
 * up by id.
 */
async function eventDeliveries(sources: ConsoleSources, entry: InboxEntry, recordIds: readonly string[]): Promise<ListedDelivery[]> {
  const ids = recordIds.flatMap((id) => sources.outbox.subscribers(streamOf(id)).map((connector) => `${connector}:${id}`));
  const key = storedKeyOf(entry.body);
  if (key === undefined) return sources.store.outbox.lookup({ ids });
  const keys = new Map<string, { connector: string; orderKey: string }>();
  for (const id of recordIds) {
    const orderKey = orderKeyOf(streamOf(id), key, id);
    for (const connector of sources.outbox.subscribers(streamOf(id))) keys.set(`${connector}\u0000${orderKey}`, { connector, orderKey });
  }
  const wanted = new Set(ids);
  return (await sources.store.outbox.lookup({ keys: [...keys.values()] })).filter((delivery) => wanted.has(delivery.id));
}

const streamOf = (recordId: string): Stream => recordId.slice(0, recordId.indexOf(':')) as Stream;

/** The cycle that committed the change: the poll run that was running when the delivery was enqueued. */
function pollOrigin(runs: readonly Run[], enqueuedAt: number): RecordTrail['origin'] {
  if (!Number.isFinite(enqueuedAt)) return { kind: 'unknown' };
  const run = runs.find((r) => r.kind === 'poll' && r.startedAt <= enqueuedAt && enqueuedAt <= r.startedAt + r.durationMs + 1000);
  return run ? { kind: 'poll', at: run.startedAt, ...(run.id === undefined ? {} : { runId: run.id }), trigger: run.trigger } : { kind: 'poll', at: enqueuedAt };
}

function connectorTrail(connector: string, attempts: readonly Attempt[], delivery: ListedDelivery | undefined, range: CreatedRange | undefined, viewer: Viewer): ConnectorTrail {
  const shown = attempts.map(({ at, outcome, httpStatus, durationMs, error }) => ({
    at, outcome, ...(httpStatus === undefined ? {} : { httpStatus }), ...(durationMs === undefined ? {} : { durationMs }),
    ...(error === undefined ? {} : { error: viewer.authed ? error : publicError(error) }),
  }));
  if (!delivery && range && attempts.at(-1)?.outcome !== 'done') return { connector, state: range.lastError ? 'retrying' : 'queued', nextRunAt: range.runAt, attempts: shown };
  if (!delivery) return { connector, state: attempts.at(-1)?.outcome === 'done' ? 'done' : 'unknown', attempts: shown };
  if (delivery.waitingFor) return { connector, state: 'waiting', waitingFor: delivery.waitingFor, attempts: shown };
  if (delivery.status === 'dead') return { connector, state: 'dead', attempts: shown };
  if (delivery.status === 'active') return { connector, state: 'in-flight', attempts: shown };
  return { connector, state: delivery.lastError ? 'retrying' : 'queued', nextRunAt: delivery.runAt, attempts: shown };
}
