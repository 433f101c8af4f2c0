import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { createStore, type Store } from '../store/index.js';
import { INBOX, QUARANTINE, type InboxEntry } from './collections.js';
import { createIntake } from './intake.js';
import { createIntakeMetrics } from './intake-metrics.js';
import { createEventOperator } from './operator.js';
import { eventBody, invoice, manualClock, recordingSink, signed, TEST_NOW_MS, TEST_SECRET } from './testing.js';

const log = pino({ level: 'silent' });
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.stop();
});

async function setup() {
  const store = createStore({ log });
  await store.start();
  stores.push(store);
  const sink = recordingSink();
  const clock = manualClock();
  const intake = createIntake({ store, sink, clock, log, metrics: createIntakeMetrics(new Registry()), secrets: [TEST_SECRET], toleranceSeconds: 300 });
  const operator = createEventOperator({ store, sink, clock, retentionHours: 120 });
  return { store, sink, intake, operator };
}

const staleBy = (seconds: number, body = eventBody()) => signed(body, { timestampSeconds: Math.floor(TEST_NOW_MS / 1000) - seconds });

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BridgeError) return error.code;
    throw error;
  }
  return 'resolved';
}

describe('events quarantine', () => {
  it('lists, then releases a stale delivery into the inbox and the outbox', async () => {
    const { store, sink, intake, operator } = await setup();
    const stale = staleBy(3600);
    await intake.receive(stale.header, stale.body);
    const [held, ...others] = operator.listQuarantine();
    expect(others).toEqual([]);
    expect(held).toMatchObject({ event: 'invoice.created', reason: 'stale', signedAt: new Date(TEST_NOW_MS - 3_600_000).toISOString() });

    const released = await operator.release(held!.id);
    expect(released).toMatchObject({ id: held!.id, outcome: 'released' });
    expect(released.recordIds).toEqual([`events:${held!.id}`, `invoices:${held!.id}`]);
    expect(sink.enqueued.map((r) => r.id)).toEqual(released.recordIds);
    expect([store.size(QUARANTINE), store.size(INBOX), sink.notified]).toEqual([0, 1, 1]);
    expect(await code(operator.release(held!.id))).toBe('webhooks.not_found');
  });

  it('releases as a duplicate, emitting nothing, when the event is in the inbox already', async () => {
    const { store, sink, intake, operator } = await setup();
    const stale = staleBy(3600);
    await intake.receive(stale.header, stale.body);
    const id = operator.listQuarantine()[0]!.id;
    // A store that has both (written by an older version, or by hand): release must not emit twice.
    await store.commit([{ op: 'put', c: INBOX, k: id, v: { id } }]);
    expect(await operator.release(id)).toEqual({ id, outcome: 'duplicate', recordIds: [] });
    expect([sink.enqueued.length, store.size(QUARANTINE)]).toEqual([0, 0]);
  });

  it('a fresh delivery of a held event supersedes the quarantine entry', async () => {
    const { store, intake, operator } = await setup();
    const stale = staleBy(3600);
    await intake.receive(stale.header, stale.body);
    const fresh = signed();
    expect(await intake.receive(fresh.header, fresh.body)).toMatchObject({ status: 200, outcome: 'stored' });
    expect(operator.listQuarantine()).toEqual([]);
    expect(await code(operator.release('nope'))).toBe('webhooks.not_found');
    expect(store.size(INBOX)).toBe(1);
  });
});

describe('events reprocess', () => {
  it('re-emits a stored event with new suffixed ids each time, by inbox or record id', async () => {
    const { store, sink, intake, operator } = await setup();
    const delivery = signed();
    const answer = await intake.receive(delivery.header, delivery.body);
    const id = answer.status === 200 ? answer.id : '';
    expect((await operator.reprocess(id)).recordIds).toEqual([`events:${id}:r1`, `invoices:${id}:r1`]);
    expect((await operator.reprocess(`invoices:${id}`)).recordIds).toEqual([`events:${id}:r2`, `invoices:${id}:r2`]);
    expect(sink.enqueued).toHaveLength(6);
    expect(store.get<InboxEntry>(INBOX, id)).toMatchObject({ reprocessed: 2 });
    expect(sink.enqueued[2]).toMatchObject({ record: invoice(), event: 'invoice.created' });
  });

  it('says when the event is not (or no longer) in the inbox', async () => {
    const { operator } = await setup();
    expect(await code(operator.reprocess('invoice.created:1:000000000000'))).toBe('webhooks.not_found');
  });
});
