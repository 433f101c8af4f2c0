import { describe, expect, it } from 'vitest';
import type { Attempt, CreatedRange, InboxEntry, ListedDelivery, Person, Run } from '../store/index.js';
import { findRecords } from './records.js';
import type { ConsoleSources } from './sources.js';

const T = Date.parse('2026-11-22T10:00:00Z');
const anna: Person = { stream: 'students', key: 1, chain: 'aaaaaaaaaaaa', name: 'Anna Nowak', email: 'anna@example.com', userId: 101 };
const jan: Person = { stream: 'students', key: 2, chain: 'bbbbbbbbbbbb', name: 'Jan Kos' };
const run: Run = { id: 7, kind: 'poll', trigger: 'schedule', startedAt: T - 1000, durationMs: 2000, outcome: 'ok', counts: {} };
const attempt = (over: Partial<Attempt>): Attempt => ({ recordId: 'students:1:cccccccccccc', connector: 'hook', enqueuedAt: T, at: T + 10, outcome: 'retry', ...over });
const range: CreatedRange = { connector: 'hook', stream: 'students', part: 0, detectedAt: new Date(T).toISOString(), remaining: 1, after: 1, upto: 2, runAt: T + 60_000, attempts: 0 };
const invoiceEvent: InboxEntry = {
  id: 'invoice.created:501:dddddddddddd', event: 'invoice.created', receivedAt: new Date(T).toISOString(), receivedAtMs: T, body: '{}',
  recordIds: ['events:invoice.created:501:dddddddddddd', 'invoices:invoice.created:501:dddddddddddd'], reprocessed: 0,
};

function sources(over: { dead?: boolean } = {}): ConsoleSources {
  const dead: ListedDelivery = {
    id: 'hook:students:1:cccccccccccc', connector: 'hook', recordId: 'students:1:cccccccccccc', stream: 'students', orderKey: 'students:1', seq: 1,
    status: 'dead', enqueuedAt: T, runAt: T, attempts: 2, fence: 1, lastError: 'webhook.rejected: the receiver answered 422: {"email":"anna@example.com"}',
  };
  return {
    store: {
      people: { search: async (q: { text?: string; id?: number }) => [anna, jan].filter((p) => (q.text ? p.name.toLowerCase().includes(q.text) : p.userId === q.id || p.key === q.id)), get: async () => [], refresh: async () => false },
      inbox: { search: async (texts: readonly string[]) => (texts.some((t) => t.includes('501')) ? [invoiceEvent] : []), get: async () => invoiceEvent },
      history: {
        runs: async () => [run],
        attempts: async (f: { recordIds?: readonly string[]; prefixes?: readonly string[] }) => (f.prefixes?.[0] === 'students:1:'
          ? [attempt({}), attempt({ at: T + 20, outcome: 'dead', httpStatus: 422, error: dead.lastError })]
          : f.recordIds?.includes('invoices:invoice.created:501:dddddddddddd') ? [attempt({ recordId: 'invoices:invoice.created:501:dddddddddddd', outcome: 'done', httpStatus: 200 })] : []),
      },
      outbox: { lookup: async (q: { keys?: readonly { orderKey: string }[] }) => (over.dead !== false && q.keys?.[0]?.orderKey === 'students:1' ? [dead] : []), ranges: async () => [range] },
    } as never,
    outbox: { subscribers: (stream: string) => (stream === 'events' ? [] : ['hook']) } as never,
    quarantine: async () => [],
    clock: { now: () => T + 60_000 } as never,
    timezone: 'Europe/Warsaw',
    historyDays: 14,
    unready: () => [],
  };
}

describe('finding a record and its trail', () => {
  it('shows a person\'s change from the poll cycle that found it, each attempt, and where it stands', async () => {
    const found = await findRecords(sources(), 'anna', { authed: false });
    const [subject] = found.subjects;
    expect(subject).toMatchObject({ kind: 'person', name: 'Anna Nowak', email: 'anna@example.com' });
    const [trail] = subject!.records;
    expect(trail).toMatchObject({ recordId: 'students:1:cccccccccccc', origin: { kind: 'poll', runId: 7, trigger: 'schedule' } });
    expect(trail!.connectors).toEqual([{ connector: 'hook', state: 'dead', attempts: [
      { at: T + 10, outcome: 'retry' },
      // Without the token, the receiver's words are not shown.
      { at: T + 20, outcome: 'dead', httpStatus: 422, error: 'webhook.rejected (HTTP 422)' },
    ] }]);
    const authed = await findRecords(sources(), 'anna', { authed: true });
    expect(authed.subjects[0]!.records[0]!.connectors[0]!.attempts[1]!.error).toContain('anna@example.com');
  });

  it('says a first cycle\'s created change still owed by a range is queued', async () => {
    const found = await findRecords(sources(), 'jan', { authed: false });
    expect(found.subjects[0]!.records).toEqual([expect.objectContaining({
      recordId: 'students:2:bbbbbbbbbbbb', connectors: [{ connector: 'hook', state: 'queued', nextRunAt: T + 60_000, attempts: [] }],
    })]);
  });

  it('finds an invoice by its number and shows the webhook delivery it came from', async () => {
    const found = await findRecords(sources(), '501', { authed: false });
    const event = found.subjects.find((s) => s.kind === 'event');
    expect(event?.records.map((r) => [r.recordId, r.origin.kind, r.connectors.map((c) => c.state)])).toEqual([
      ['events:invoice.created:501:dddddddddddd', 'webhook', []],
      ['invoices:invoice.created:501:dddddddddddd', 'webhook', ['done']],
    ]);
    expect(await findRecords(sources(), '   ', { authed: true })).toEqual({ query: '', subjects: [] });
    // By a delivery's id as the status page shows it: its connector, then its record's id.
    const looked = sources();
    (looked.store as unknown as { inbox: { search: () => Promise<unknown[]> } }).inbox.search = async () => [];
    const byDelivery = await findRecords(looked, 'hook:invoices:invoice.created:501:dddddddddddd', { authed: false });
    expect(byDelivery.subjects.map((s) => (s.kind === 'event' ? s.id : s.key))).toEqual([event?.kind === 'event' ? event.id : 'none']);
  });

  it("looks an event's queued deliveries up by their records' key, and keeps its own records' alone", async () => {
    const body = '{"event":"invoice.created","object":{"id":501,"numberId":9}}';
    const queued = (recordId: string): ListedDelivery => ({
      id: `hook:${recordId}`, connector: 'hook', recordId, stream: 'invoices', orderKey: 'invoices:501', seq: 3, status: 'pending', enqueuedAt: T, runAt: T, attempts: 0, fence: 0,
    });
    const asked: unknown[] = [];
    const base = sources();
    const found = await findRecords({
      ...base,
      store: {
        ...base.store,
        inbox: { search: async () => [{ ...invoiceEvent, body }], get: async () => ({ ...invoiceEvent, body }) },
        outbox: {
          ...base.store.outbox,
          lookup: async (query: unknown) => {
            asked.push(query);
            // The key's deliveries: this event's record, and another event's of the same invoice.
            return [queued('invoices:invoice.created:501:dddddddddddd'), queued('invoices:invoice.updated:501:eeeeeeeeeeee')];
          },
        },
      } as never,
    }, '501', { authed: false });
    expect(asked).toContainEqual({ keys: [{ connector: 'hook', orderKey: 'invoices:501' }] });
    const event = found.subjects.find((s) => s.kind === 'event');
    expect(event?.records.map((r) => r.recordId)).toEqual(['events:invoice.created:501:dddddddddddd', 'invoices:invoice.created:501:dddddddddddd']);
    expect(event?.records[1]!.connectors.map((c) => c.state)).toEqual(['queued']);
  });

  it('looks for what an event says as written, a longer number anywhere too, and takes no control character', async () => {
    const asked: string[][] = [];
    const base = sources();
    const store = base.store as unknown as { inbox: { search: (texts: readonly string[]) => Promise<unknown[]> } };
    store.inbox.search = async (texts) => (asked.push([...texts]), []);
    await findRecords(base, 'say "hi" 1/12', { authed: false });
    await findRecords(base, '42', { authed: false });
    await findRecords(base, '600100200', { authed: false });
    // A NUL (`?query=%00`) would end a LIKE pattern early, leaving one that matches every event.
    expect(await findRecords(base, '\u0000', { authed: false })).toEqual({ query: '', subjects: [] });
    await findRecords(base, 'FV\u0000 12', { authed: false });
    expect(asked).toEqual([
      ['say "hi" 1/12'],
      ['"id":42,', '"id":42}', '"id":"42"'],
      ['"id":600100200,', '"id":600100200}', '"id":"600100200"', '600100200'],
      ['FV  12'],
    ]);
  });
});
