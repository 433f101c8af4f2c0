import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { createStore, type Store } from '../store/index.js';
import { INBOX, QUARANTINE } from './collections.js';
import { createIntake, type IntakeStore } from './intake.js';
import { createIntakeMetrics } from './intake-metrics.js';
import { eventBody, invoice, manualClock, recordingSink, signed, TEST_NOW_MS, TEST_SECRET } from './testing.js';

const log = pino({ level: 'silent' });
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.stop();
});

async function setup(options: { secrets?: string[]; store?: (memory: Store) => IntakeStore } = {}) {
  const memory = createStore({ log });
  await memory.start();
  stores.push(memory);
  const store = options.store ? options.store(memory) : memory;
  const sink = recordingSink();
  const clock = manualClock();
  const registry = new Registry();
  const metrics = createIntakeMetrics(registry);
  const intake = createIntake({ store, sink, clock, log, metrics, secrets: options.secrets ?? [TEST_SECRET], toleranceSeconds: 300 });
  const count = async (name: string, labels = '') => {
    const text = await registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`schoolbridge_webhook_${name}${labels ? `{${labels}}` : ''} `));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  return { store: memory, sink, clock, intake, count };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

describe('webhook intake', () => {
  it('stores a verified event with its records in one commit, then answers 200', async () => {
    const { store, sink, intake, count } = await setup();
    const delivery = signed();
    const answer = await intake.receive(delivery.header, delivery.body);
    expect(answer).toMatchObject({ status: 200, outcome: 'stored' });
    expect(sink.enqueued.map((r) => r.stream)).toEqual(['events', 'invoices']);
    expect(store.size('test.outbox')).toBe(2);
    expect(store.size(INBOX)).toBe(1);
    expect(sink.notified).toBe(1);
    expect([await count('received_total'), await count('stored_total')]).toEqual([1, 1]);
  });

  it('answers 200 to a redelivery (new timestamp, new signature) without storing it again', async () => {
    const { store, sink, intake, clock, count } = await setup();
    await intake.receive(signed().header, signed().body);
    clock.advance(60_000);
    const again = signed(eventBody(), { timestampSeconds: seconds(clock.now()) });
    expect(await intake.receive(again.header, again.body)).toMatchObject({ status: 200, outcome: 'duplicate' });
    expect(sink.enqueued).toHaveLength(2);
    expect(store.size(INBOX)).toBe(1);
    expect(await count('duplicates_total')).toBe(1);
  });

  it('turns concurrent identical deliveries into one stored event', async () => {
    const { store, sink, intake } = await setup();
    const deliveries = Array.from({ length: 20 }, (_, i) => signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - i }));
    const answers = await Promise.all(deliveries.map((d) => intake.receive(d.header, d.body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.status === 200 && a.outcome === 'stored')).toHaveLength(1);
    expect(sink.enqueued).toHaveLength(2);
    expect(store.size(INBOX)).toBe(1);
  });

  it('accepts a previous secret during a rotation', async () => {
    const { intake } = await setup({ secrets: ['new-secret', TEST_SECRET] });
    const delivery = signed();
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 200 });
  });

  it('answers 401 to a wrong signature and keeps nothing', async () => {
    const { store, sink, intake, count } = await setup();
    const delivery = signed(eventBody(), { secret: 'not-ours' });
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 401, reason: 'mismatch' });
    expect([store.size(INBOX), store.size(QUARANTINE), sink.enqueued.length]).toEqual([0, 0, 0]);
    expect(await count('rejected_total', 'reason="mismatch"')).toBe(1);
  });

  it('answers 400 to a verified body that is not an event object', async () => {
    const { store, sink, intake } = await setup();
    const delivery = signed('{"event":"invoice.created"}');
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 400, reason: 'body' });
    expect([store.size(INBOX), sink.enqueued.length]).toEqual([0, 0]);
  });

  it('quarantines a correctly signed stale delivery once, answers 401, and a fresh one supersedes it', async () => {
    const { store, sink, intake, count } = await setup();
    const stale = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 301 });
    for (let i = 0; i < 3; i++) expect(await intake.receive(stale.header, stale.body)).toMatchObject({ status: 401, reason: 'stale' });
    expect([store.size(QUARANTINE), sink.enqueued.length, await count('quarantined_total')]).toEqual([1, 0, 1]);
    const future = signed(eventBody('invoice.created', invoice({ id: 2 })), { timestampSeconds: seconds(TEST_NOW_MS) + 301 });
    expect(await intake.receive(future.header, future.body)).toMatchObject({ status: 401, reason: 'future' });
    expect(store.size(QUARANTINE)).toBe(2);
    const fresh = signed();
    expect(await intake.receive(fresh.header, fresh.body)).toMatchObject({ status: 200, outcome: 'stored' });
    expect(store.size(QUARANTINE)).toBe(1);
  });

  it('does not quarantine a stale retry of an event it already has, nor an unparseable signed body', async () => {
    const { store, intake } = await setup();
    await intake.receive(signed().header, signed().body);
    const staleRetry = signed(eventBody(), { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(staleRetry.header, staleRetry.body)).toMatchObject({ status: 401, reason: 'stale' });
    const staleJunk = signed('not json', { timestampSeconds: seconds(TEST_NOW_MS) - 3600 });
    expect(await intake.receive(staleJunk.header, staleJunk.body)).toMatchObject({ status: 401, reason: 'stale' });
    expect(store.size(QUARANTINE)).toBe(0);
  });

  it('answers 503 when the store cannot write, and keeps answering 503 for that event', async () => {
    const failing = (memory: Store): IntakeStore => ({
      get: (c, k) => memory.get(c, k),
      has: (c, k) => memory.has(c, k),
      commit: (ops) => {
        void memory.commit(ops);
        return Promise.reject(new BridgeError('store.unavailable', 'disk full', { retryable: true }));
      },
      durable: () => Promise.reject(new BridgeError('store.unavailable', 'disk full', { retryable: true })),
    });
    const { intake, sink, count } = await setup({ store: failing });
    const delivery = signed();
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 503, reason: 'store' });
    expect(await intake.receive(delivery.header, delivery.body)).toMatchObject({ status: 503, reason: 'store' });
    expect(sink.notified).toBe(0);
    expect(await count('stored_total')).toBe(0);
  });
});
