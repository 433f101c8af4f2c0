import { afterEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { BridgeError } from '../errors.js';
import type { Delivery } from '../store/index.js';
import { createDeliveryReport } from './delivery-report.js';
import { OutboxEvents } from './events.js';

function setup() {
  const lines: { level: number; msg: string; connector?: string; retrying?: number; error?: string; delivered?: unknown }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
  const events = new OutboxEvents(log);
  let clock = 0;
  const report = createDeliveryReport({ outbox: events, log, windowMs: 1000, retryQuietMs: 60_000, now: () => clock });
  const delivery = (connector: string, stream = 'invoices'): Delivery =>
    ({ id: `${connector}:x`, connector, recordId: 'x', stream, orderKey: 'k', seq: 1, status: 'pending', enqueuedAt: 0, runAt: 0, attempts: 1, fence: 1 }) as Delivery;
  const fail = (connector: string, message: string) =>
    events.emit('retry', { delivery: delivery(connector), error: new BridgeError('accounting.unavailable', message, { retryable: true }) });
  const advance = async (ms: number) => {
    clock += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };
  return { lines, events, report, delivery, fail, advance };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('delivery report', () => {
  it('logs failures soon after the first, then at most once per quiet period, with the count and the last error', async () => {
    vi.useFakeTimers();
    const { lines, fail, advance, report } = setup();
    fail('accounting', 'HTTP 503');
    fail('accounting', 'HTTP 502');
    await advance(1000);
    expect(lines).toEqual([expect.objectContaining({ level: 40, connector: 'accounting', retrying: 2, error: 'accounting.unavailable: HTTP 502' })]);
    // A receiver down for long: one line a minute, not one per attempt.
    for (let s = 0; s < 59; s++) {
      fail('accounting', 'HTTP 503');
      await advance(1000);
    }
    expect(lines).toHaveLength(1);
    await advance(1000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ retrying: 59, msg: 'deliveries to accounting failed and will be retried: 59 failed attempt(s) of 1 delivery since the last report; 59× accounting.unavailable: HTTP 503' });
    await advance(120_000);
    expect(lines).toHaveLength(2);
    fail('hook', 'HTTP 500');
    report.stop();
    expect(lines[2]).toMatchObject({ connector: 'hook', retrying: 1 });
  });

  it('counts the deliveries that failed, those delivered since, and each kind of error', async () => {
    vi.useFakeTimers();
    const { lines, events, advance } = setup();
    const one = (id: string): Delivery => ({ id, connector: 'hook', recordId: id, stream: 'invoices', orderKey: id, seq: 1, status: 'pending', enqueuedAt: 0, runAt: 0, attempts: 1, fence: 1 }) as Delivery;
    const fail = (id: string, code: string, message: string) => events.emit('retry', { delivery: one(id), error: new BridgeError(code, message, { retryable: true }) });
    fail('a', 'webhook.unavailable', 'the receiver answered 503');
    fail('b', 'webhook.network', 'no answer within 3000 ms (timeoutMs)');
    fail('a', 'webhook.unavailable', 'the receiver answered 502');
    events.emit('delivered', { delivery: one('a') });
    await advance(1000);
    expect(lines).toEqual([expect.objectContaining({
      level: 40, retrying: 3, deliveries: 2, deliveredSince: 1,
      msg: 'deliveries to hook failed and will be retried: 3 failed attempt(s) of 2 deliveries since the last report, 1 of them delivered since; '
        + '2× webhook.unavailable: the receiver answered 502; 1× webhook.network: no answer within 3000 ms (timeoutMs)',
    }), expect.objectContaining({ level: 30, msg: 'delivered to hook: 1 invoices' })]);
  });

  it('logs what was delivered per connector and stream, gathered over the window', async () => {
    vi.useFakeTimers();
    const { lines, events, delivery, advance } = setup();
    events.emit('delivered', { delivery: delivery('files', 'students') });
    events.emit('delivered', { delivery: delivery('files', 'students') });
    events.emit('delivered', { delivery: delivery('files', 'users') });
    await advance(1000);
    expect(lines).toEqual([expect.objectContaining({ level: 30, connector: 'files', delivered: { students: 2, users: 1 }, msg: 'delivered to files: 2 students, 1 users' })]);
  });
});
