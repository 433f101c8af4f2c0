import { describe, expect, it } from 'vitest';
import { change, nextEvent } from './support/outbox.js';
import { TEST_NOW_MS, testClock } from './support/clock.js';
import { outboxWith, receiver, useReceiver } from './support/webhook-connector.js';
import { BLOCKED, retryAndReport } from '../src/outbox/retry-report.js';

useReceiver();

/** The connector under the outbox: retries, dead deliveries, Retry-After and the order of a key's records. */
describe('webhook connector through the outbox', () => {
  it('503 for a while, then 200: delivered once, with the same Idempotency-Key every time', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = (_r, n) => ({ status: n <= 3 ? 503 : 200 });
    const outbox = await outboxWith(clock);
    const record = change('students', 1);
    const delivered = nextEvent(outbox, 'delivered');
    await outbox.enqueue([record]);
    for (let i = 0; i < 3; i++) {
      await outbox.whenIdle();
      clock.advance(60_000);
    }
    expect((await delivered).delivery).toMatchObject({ recordId: record.id, attempts: 4 });
    await outbox.whenIdle();
    expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual([record.id, record.id, record.id, record.id]);
    expect(receiver.received.filter((_, i) => i >= 3)).toHaveLength(1);
    expect(await outbox.list()).toEqual([]);
  });

  it('a receiver that trickles its answer is cut off at its deadline and retried once', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = (_r, n) => (n === 1 ? { status: 503, body: 'trickle' } : { status: 200 });
    const outbox = await outboxWith(clock, { timeoutMs: 300 });
    const record = change('students', 1);
    const retry = nextEvent(outbox, 'retry');
    const delivered = nextEvent(outbox, 'delivered');
    await outbox.enqueue([record]);
    // Cut off at the deadline (real time: the receiver's clock), long before the 10-minute lease.
    expect((await retry).delivery).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringMatching(/^webhook\.unavailable: the receiver answered 503: x+$/) });
    await receiver.whenCutOff(1);
    clock.advance(60_000);
    expect((await delivered).delivery).toMatchObject({ recordId: record.id, attempts: 2 });
    expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual([record.id, record.id]);
  });

  it('400: dead at once, kept, and delivered when retried', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = (_r, n) => ({ status: n === 1 ? 400 : 200 });
    const outbox = await outboxWith(clock);
    const record = change('students', 1);
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([record]);
    expect((await dead).delivery).toMatchObject({ status: 'dead', attempts: 1, lastError: 'webhook.rejected: the receiver answered 400: status 400' });
    clock.advance(24 * 3_600_000);
    await outbox.whenIdle();
    expect(receiver.received).toHaveLength(1);
    expect((await outbox.list({ state: 'dead' })).map((d) => d.recordId)).toEqual([record.id]);
    expect(await outbox.retryAllDead()).toEqual([`hook:${record.id}`]);
    await outbox.whenIdle();
    expect(receiver.received).toHaveLength(2);
    expect(await outbox.list()).toEqual([]);
  });

  it('retrying one that waits behind a dead delivery of its key says so at once, and retrying the head lets both go', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = (_r, n) => ({ status: n === 1 ? 410 : 200 });
    const outbox = await outboxWith(clock);
    const [first, second] = [change('students', 2, 'created'), change('students', 2, 'updated')];
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([first, second]);
    await dead;
    await outbox.whenIdle();
    const waiting = `hook:${second.id}`;
    // No wait for an outcome that cannot come while the head is dead (the CLI waited two minutes).
    expect(await retryAndReport(outbox, { id: waiting }, 3_600_000)).toEqual({ retried: [waiting], delivered: [], failed: [{ id: waiting, status: 'blocked', lastError: BLOCKED }] });
    expect(await retryAndReport(outbox, { id: `hook:${first.id}` }, 3_600_000)).toMatchObject({ delivered: [`hook:${first.id}`], failed: [] });
    await outbox.whenIdle();
    expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual([first.id, first.id, second.id]);
  });

  it('a delivery in flight at stop is let finish, and its outcome recorded: not sent again after a restart', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = () => ({ status: 200, delayMs: 300 });
    const outbox = await outboxWith(clock);
    const record = change('students', 4);
    await outbox.enqueue([record]);
    await receiver.nextRequest();
    await outbox.stop();
    expect(receiver.received).toHaveLength(1);
    expect(await outbox.list()).toEqual([]);
  });

  it('429 with Retry-After: not tried again before the receiver said', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    receiver.respond = (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 });
    const outbox = await outboxWith(clock);
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([change('students', 1)]);
    const { delivery } = await retry;
    expect(delivery.runAt - clock.now()).toBe(120_000);
    clock.advance(119_999);
    await outbox.whenIdle();
    expect(receiver.received).toHaveLength(1);
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1);
    await delivered;
    expect(receiver.received).toHaveLength(2);
  });

  it('create, update, update of one key arrive in order while another key keeps failing', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    const create = change('students', 1, 'created');
    const update = change('students', 1, 'updated');
    const update2 = change('students', 1, 'updated');
    const other = change('students', 2, 'created');
    receiver.respond = (r) => ({ status: JSON.parse(r.body).key === 2 ? 503 : 200 });
    const outbox = await outboxWith(clock);
    const last = nextEvent(outbox, 'delivered', (p) => p.delivery.recordId === update2.id);
    await outbox.enqueue([other, create, update, update2]);
    await last;
    await outbox.whenIdle();
    const ids = receiver.received.map((r) => r.headers['idempotency-key']);
    expect(ids.filter((id) => id !== other.id)).toEqual([create.id, update.id, update2.id]);
    expect((await outbox.list()).map((d) => [d.recordId, d.status])).toEqual([[other.id, 'pending']]);
  });

  it('starts no request once the replica\'s leases may be another\'s, and sends it when they stand again', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    const create = change('students', 1, 'created');
    const update = change('students', 1, 'updated');
    // As a replica frozen for longer than its heartbeat's life finds itself on waking: its leases are
    // not sure to be its own any more, and another replica may have delivered newer records meanwhile.
    let stand = true;
    receiver.respond = () => {
      stand = false;
      return { status: 200 };
    };
    const outbox = await outboxWith(clock, {}, { leasesStand: () => stand });
    const refused = nextEvent(outbox, 'retry', (p) => p.delivery.recordId === update.id);
    await outbox.enqueue([create, update]);
    expect((await refused).delivery).toMatchObject({ attempts: 1, lastError: expect.stringContaining('outbox.lease_lost') });
    expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual([create.id]);
    stand = true;
    receiver.respond = () => ({ status: 200 });
    const delivered = nextEvent(outbox, 'delivered', (p) => p.delivery.recordId === update.id);
    clock.advance(60_000);
    await delivered;
    expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual([create.id, update.id]);
  });
});
