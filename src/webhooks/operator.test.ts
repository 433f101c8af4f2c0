import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, testStore } from '../../test/support/stores.js';
import { BridgeError } from '../errors.js';
import { RawJson } from '../json/index.js';
import type { InboxEntry, Store } from '../store/index.js';
import { createIntake } from './intake.js';
import { createIntakeMetrics } from './intake-metrics.js';
import { createEventOperator } from './operator.js';
import { testClock } from '../../test/support/clock.js';
import { eventBody, invoice, recordingSink, signed, TEST_NOW_MS, TEST_SECRET } from '../../test/support/webhooks.js';

const log = pino({ level: 'silent' });
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

/** The record ids the store's outbox holds, in enqueue order. */
async function queued(store: Store): Promise<string[]> {
  return (await store.outbox.list()).map((d) => d.recordId);
}

describe.each(ENGINES)('events operator on %s', (engine) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup() {
    const clock = testClock(TEST_NOW_MS, { sleep: 'hold' });
    const made = await testStore(engine, { clock });
    cleanups.push(made.cleanup);
    const { store } = made;
    const sink = recordingSink();
    const intake = createIntake({
      store: store.inbox, health: () => store.health(), sink, clock, log, metrics: createIntakeMetrics(new Registry()),
      secrets: [TEST_SECRET], toleranceSeconds: 300,
    });
    const operator = createEventOperator({ store: store.inbox, sink, clock, retentionHours: 120 });
    return { store, sink, clock, intake, operator };
  }

  describe('events quarantine', () => {
    it('lists, then releases a stale delivery into the inbox and the outbox', async () => {
      const { store, sink, clock, intake, operator } = await setup();
      const stale = staleBy(3600);
      await intake.receive(stale.header, stale.body);
      const [held, ...others] = await operator.listQuarantine();
      expect(others).toEqual([]);
      expect(held).toEqual({
        id: expect.stringMatching(/^invoice\.created:1001:[0-9a-f]{12}$/) as unknown, event: 'invoice.created', reason: 'stale',
        signedAt: new Date(TEST_NOW_MS - 3_600_000).toISOString(), receivedAt: new Date(TEST_NOW_MS).toISOString(), bytes: eventBody().length,
      });
      const id = held!.id;

      clock.advance(60_000);
      const released = await operator.release(id);
      expect(released).toEqual({ id, outcome: 'released', recordIds: [`events:${id}`, `invoices:${id}`] });
      expect(await queued(store)).toEqual(released.recordIds);
      // The event counts as received when released: its retention starts then.
      expect(await store.inbox.get(id)).toMatchObject({ body: eventBody(), recordIds: released.recordIds, receivedAtMs: TEST_NOW_MS + 60_000 });
      expect([await operator.listQuarantine(), sink.notified]).toEqual([[], 1]);
      expect(await code(operator.release(id))).toBe('webhooks.not_found');
    });

    it('releases as a duplicate, emitting nothing, when the event is in the inbox already', async () => {
      const { store, sink, intake, operator } = await setup();
      const fresh = signed();
      const answer = await intake.receive(fresh.header, fresh.body);
      const id = answer.status === 200 ? answer.id : '';
      // A held delivery whose id is not its event's identity (kept by an older version, or edited by
      // hand) can name an event the inbox has: releasing it must not emit that event twice.
      const oldId = 'invoice.created:1001:000000000000';
      expect(await store.inbox.quarantine({ id: oldId, event: 'invoice.created', reason: 'stale', timestamp: 1, receivedAt: 'then', body: eventBody() })).toBe(true);
      const before = { queued: await queued(store), notified: sink.notified };
      expect(await operator.release(oldId)).toEqual({ id, outcome: 'duplicate', recordIds: [] });
      expect({ queued: await queued(store), notified: sink.notified }).toEqual(before);
      expect(await operator.listQuarantine()).toEqual([]);
    });

    it('a fresh delivery of a held event supersedes the quarantine entry', async () => {
      const { store, intake, operator } = await setup();
      const stale = staleBy(3600);
      await intake.receive(stale.header, stale.body);
      const fresh = signed();
      const answer = await intake.receive(fresh.header, fresh.body);
      expect(answer).toMatchObject({ status: 200, outcome: 'stored' });
      expect(await operator.listQuarantine()).toEqual([]);
      expect(await code(operator.release('nope'))).toBe('webhooks.not_found');
      expect(await store.inbox.get(answer.status === 200 ? answer.id : '')).toBeDefined();
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
      const all = [`events:${id}`, `invoices:${id}`, `events:${id}:r1`, `invoices:${id}:r1`, `events:${id}:r2`, `invoices:${id}:r2`];
      expect(await queued(store)).toEqual(all);
      expect(await store.inbox.get(id)).toMatchObject({ reprocessed: 2, recordIds: all });
      expect(sink.planned[2]).toMatchObject({ record: new RawJson(JSON.stringify(invoice())), event: 'invoice.created' });
      expect(sink.notified).toBe(3);
    });

    it('refuses to re-emit from a stale read when someone re-emitted meanwhile', async () => {
      const { store, sink, clock, intake, operator } = await setup();
      const delivery = signed();
      const answer = await intake.receive(delivery.header, delivery.body);
      const id = answer.status === 200 ? answer.id : '';
      const read = (await store.inbox.get(id)) as InboxEntry;
      await operator.reprocess(id);
      const late = createEventOperator({ store: { ...store.inbox, get: async () => read }, sink, clock, retentionHours: 120 });
      expect(await code(late.reprocess(id))).toBe('webhooks.conflict');
      expect(await store.inbox.get(id)).toMatchObject({ reprocessed: 1 });
      expect(await queued(store)).toHaveLength(4);
    });

    it('says when the event is not (or no longer) in the inbox', async () => {
      const { operator } = await setup();
      expect(await code(operator.reprocess('invoice.created:1:000000000000'))).toBe('webhooks.not_found');
    });
  });
});
