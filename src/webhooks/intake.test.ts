import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, testStore } from '../../test/support/stores.js';
import { BridgeError } from '../errors.js';
import type { InboxStore, Store, StoreHealth } from '../store/index.js';
import { createIntake, type IntakeOptions } from './intake.js';
import { createIntakeMetrics } from './intake-metrics.js';
import { testClock } from '../../test/support/clock.js';
import { eventBody, inboxIdFor as idOf, invoice, recordingSink, signed, TEST_NOW_MS, TEST_SECRET } from '../../test/support/webhooks.js';

const log = pino({ level: 'silent' });
const seconds = (ms: number) => Math.floor(ms / 1000);

/** What the store's outbox holds, in enqueue order. */
async function deliveries(store: Store): Promise<string[]> {
  return (await store.outbox.list()).map((d) => `${d.id} ${d.status}`);
}

describe.each(ENGINES)('webhook intake on %s', (engine) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  interface Setup {
    secrets?: string[];
    /** The intake's view of the inbox, made from the real one (to make it fail). */
    inbox?: (real: InboxStore) => IntakeOptions['store'];
    health?: () => StoreHealth;
  }

  async function setup(options: Setup = {}) {
    const clock = testClock(TEST_NOW_MS, { sleep: 'hold' });
    const made = await testStore(engine, { clock });
    cleanups.push(made.cleanup);
    const { store } = made;
    const sink = recordingSink();
    const registry = new Registry();
    const intake = createIntake({
      store: options.inbox ? options.inbox(store.inbox) : store.inbox,
      health: options.health ?? (() => store.health()),
      sink, clock, log, metrics: createIntakeMetrics(registry), secrets: options.secrets ?? [TEST_SECRET], toleranceSeconds: 300,
    });
    const count = async (name: string, labels = '') => {
      const text = await registry.metrics();
      const line = text.split('\n').find((l) => l.startsWith(`schoolbridge_webhook_${name}${labels ? `{${labels}}` : ''} `));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    return { store, sink, clock, intake, count };
  }

  it('stores a verified event and its outbox deliveries together, then answers 200', async () => {
    const { store, sink, intake, count } = await setup();
    const delivery = signed();
    const id = idOf(eventBody());
    expect(await intake.receive(delivery.header, delivery.body)).toEqual({ status: 200, outcome: 'stored', id });
    expect(await store.inbox.get(id)).toEqual({
      id, event: 'invoice.created', receivedAt: new Date(TEST_NOW_MS).toISOString(), receivedAtMs: TEST_NOW_MS,
      body: eventBody(), recordIds: [`events:${id}`, `invoices:${id}`], reprocessed: 0,
    });
    expect(await deliveries(store)).toEqual([`test:events:${id} pending`, `test:invoices:${id} pending`]);
    // Connectors receive exactly the records' JSON (the intake serializes the object once for both).
    const claimed = await store.outbox.claim({ connector: 'test', limit: 10, now: TEST_NOW_MS, leaseMs: 60_000 });
    expect(claimed.map((c) => c.json).sort()).toEqual(sink.planned.map((r) => JSON.stringify(r)).sort());
    expect(sink.notified).toBe(1);
    expect([await count('received_total'), await count('stored_total')]).toEqual([1, 1]);
  });

  it('stores and enqueues no oneTimePassword, at any depth, also in quarantine', async () => {
    const { store, intake } = await setup();
    const user = { id: 70, login: 'ak', oneTimePassword: 'Otp-Student-1', parentUser: { id: 71, oneTimePassword: 'Otp-Parent-2' } };
    const text = eventBody('student.created', { id: 7, user, notes: [{ oneTimePassword: 'Otp-Listed-3' }] });
    const secretOf = /oneTimePassword|Otp-/;
    const answer = await intake.receive(signed(text).header, signed(text).body);
    const id = answer.status === 200 ? answer.id : '';
    expect((await store.inbox.get(id))?.body).not.toMatch(secretOf);
    const claimed = await store.outbox.claim({ connector: 'test', limit: 10, now: TEST_NOW_MS, leaseMs: 60_000 });
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.json).not.toMatch(secretOf);
    expect(JSON.parse(claimed[0]!.json!)).toMatchObject({ record: { id: 7, user: { id: 70, login: 'ak', parentUser: { id: 71 } }, notes: [{}] } });
    const stale = eventBody('student.created', { id: 8, user });
    await intake.receive(signed(stale, { timestampSeconds: seconds(TEST_NOW_MS) - 3600 }).header, Buffer.from(stale));
    expect((await store.inbox.quarantined()).map((q) => q.body).join()).not.toMatch(secretOf);
  });

  it('answers 200 to a redelivery (new timestamp, new signature) without storing it again', async () => {
    const { store, sink, intake, clock, count } = await setup();
    await intake.receive(signed().header, signed().body);
    clock.advance(60_000);
    const again = signed(eventBody(), { timestampSeconds: seconds(clock.now()) });
    const id = idOf(eventBody());
    expect(await intake.receive(again.header, again.body)).toEqual({ status: 200, outcome: 'duplicate', id });
    expect(await store.inbox.get(id)).toMatchObject({ receivedAtMs: TEST_NOW_MS });
    expect(await deliveries(store)).toHaveLength(2);
    expect([sink.notified, await count('stored_total'), await count('duplicates_total')]).toEqual([1, 1, 1]);
  });

  it('turns concurrent identical deliveries into one stored event', async () => {
    const { store, intake, count } = await setup();
    const all = Array.from({ length: 20 }, (_, i) => signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - i }));
    const answers = await Promise.all(all.map((d) => intake.receive(d.header, d.body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.status === 200 && a.outcome === 'stored')).toHaveLength(1);
    expect(await deliveries(store)).toHaveLength(2);
    expect([await count('stored_total'), await count('duplicates_total')]).toEqual([1, 19]);
  });

  it('accepts a previous secret during a rotation', async () => {
    const { intake } = await setup({ secrets: ['new-secret', TEST_SECRET] });
    const delivery = signed();
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 200, outcome: 'stored' });
  });

  it('answers 401 to a wrong signature and keeps nothing', async () => {
    const { store, sink, intake, count } = await setup();
    const delivery = signed(eventBody(), { secret: 'not-ours' });
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 401, reason: 'mismatch' });
    expect(await store.inbox.get(idOf(eventBody()))).toBeUndefined();
    expect([await store.inbox.quarantined(), await deliveries(store), sink.planned]).toEqual([[], [], []]);
    expect(await count('rejected_total', 'reason="mismatch"')).toBe(1);
  });

  it('answers 400 to a verified body that is not an event object', async () => {
    const { store, sink, intake } = await setup();
    const delivery = signed('{"event":"invoice.created"}');
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 400, reason: 'body' });
    expect([await deliveries(store), sink.planned]).toEqual([[], []]);
  });

  it('quarantines a correctly signed stale delivery once, answers 401, and a fresh one supersedes it', async () => {
    const { store, sink, intake, count } = await setup();
    const held = async () => (await store.inbox.quarantined()).map((q) => `${q.id} ${q.reason}`);
    const stale = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 301 });
    for (let i = 0; i < 3; i++) expect(await intake.receive(stale.header, stale.body)).toMatchObject({ status: 401, reason: 'stale' });
    expect([await held(), sink.planned, await count('quarantined_total')]).toEqual([[`${idOf(eventBody())} stale`], [], 1]);
    const secondBody = eventBody('invoice.created', invoice({ id: 2 }));
    const future = signed(secondBody, { timestampSeconds: seconds(TEST_NOW_MS) + 301 });
    expect(await intake.receive(future.header, future.body)).toMatchObject({ status: 401, reason: 'future' });
    expect(await held()).toHaveLength(2);
    const fresh = signed();
    expect(await intake.receive(fresh.header, fresh.body)).toMatchObject({ status: 200, outcome: 'stored' });
    expect(await held()).toEqual([`${idOf(secondBody)} future`]);
    expect(await store.inbox.get(idOf(eventBody()))).toBeDefined();
  });

  it('does not quarantine a stale retry of an event it already has, nor an unparseable signed body', async () => {
    const { store, intake } = await setup();
    await intake.receive(signed().header, signed().body);
    const staleRetry = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(staleRetry.header, staleRetry.body)).toMatchObject({ status: 401, reason: 'stale' });
    const staleJunk = signed('not json', { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(staleJunk.header, staleJunk.body)).toMatchObject({ status: 401, reason: 'stale' });
    expect(await store.inbox.quarantined()).toEqual([]);
  });

  it('answers 503 at once while the store says it cannot write, without calling it', async () => {
    const calls: string[] = [];
    const { store, sink, intake, count } = await setup({
      health: () => ({ ok: false, reason: 'disk full', since: TEST_NOW_MS }),
      inbox: (real) => ({
        accept(entry, records) {
          calls.push('accept');
          return real.accept(entry, records);
        },
        quarantine(entry) {
          calls.push('quarantine');
          return real.quarantine(entry);
        },
      }),
    });
    const delivery = signed();
    expect(await intake.receive(delivery.header, delivery.body)).toEqual({ status: 503, outcome: 'rejected', reason: 'store', detail: 'disk full' });
    // Nor is a stale delivery quarantined meanwhile: that is a write too. It is refused as the store's, for the upstream to retry.
    const stale = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(stale.header, stale.body)).toEqual({ status: 503, outcome: 'rejected', reason: 'store', detail: 'disk full' });
    expect(calls).toEqual([]);
    expect(await store.inbox.get(idOf(eventBody()))).toBeUndefined();
    expect([await store.inbox.quarantined(), await deliveries(store), sink.notified]).toEqual([[], [], 0]);
    expect(await count('rejected_total', 'reason="store"')).toBe(2);
  });

  it('answers 503 when a write fails, acknowledges nothing, and stores the event once the store writes again', async () => {
    let failing = true;
    const { store, sink, intake, count } = await setup({
      inbox: (real) => ({
        accept: (entry, records) =>
          failing ? Promise.reject(new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true })) : real.accept(entry, records),
        quarantine: (entry) => real.quarantine(entry),
      }),
    });
    const delivery = signed();
    const id = idOf(eventBody());
    for (let i = 0; i < 2; i++) {
      expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 503, reason: 'store', detail: expect.stringContaining('store.unavailable') as unknown });
    }
    expect([sink.notified, await count('stored_total'), await count('rejected_total', 'reason="store"')]).toEqual([0, 0, 2]);
    expect(await store.inbox.get(id)).toBeUndefined();
    expect(await deliveries(store)).toEqual([]);
    // The upstream retries what got no 200: the retry is a new event, not a duplicate of a half-write.
    failing = false;
    expect(await intake.receive(delivery.header, delivery.body)).toEqual({ status: 200, outcome: 'stored', id });
    expect(await deliveries(store)).toHaveLength(2);
  });

  it('answers 503 when a stale delivery cannot be quarantined, and holds its retry once the store writes', async () => {
    let failing = true;
    const { store, intake, count } = await setup({
      inbox: (real) => ({
        accept: (entry, records) => real.accept(entry, records),
        quarantine: (entry) => (failing ? Promise.reject(new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true })) : real.quarantine(entry)),
      }),
    });
    const stale = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(stale.header, stale.body)).toMatchObject({ status: 503, reason: 'store', detail: expect.stringContaining('store.unavailable') as unknown });
    expect(await store.inbox.quarantined()).toEqual([]);
    failing = false;
    expect(await intake.receive(stale.header, stale.body)).toMatchObject({ status: 401, reason: 'stale' });
    expect((await store.inbox.quarantined()).map((q) => q.reason)).toEqual(['stale']);
    expect(await count('quarantined_total')).toBe(1);
  });
});
