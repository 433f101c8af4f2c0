import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createSandbox, deliverySchedule, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
import { SPEC_FIELDS, startReceiver, type Receiver } from './support/sandbox.js';

/**
 * Webhook deliveries to a loopback receiver: signature checked with an independent HMAC, retries on the
 * time-scaled schedule, the delivery log. Tests await the sandbox's 'delivery' events, never sleep.
 */
const SECRET = 'test-secret-ł';
let sandbox: Sandbox | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await sandbox?.stop();
  await receiver?.close();
  sandbox = undefined;
  receiver = undefined;
});

async function setUp(answer: Parameters<typeof startReceiver>[0], options: SandboxOptions = {}, event = 'invoice.created') {
  receiver = await startReceiver(answer);
  sandbox = createSandbox({ students: 5, clientSecret: SECRET, retryTimeScale: 0.0001, ...options });
  await sandbox.start();
  const token = sandbox.control.issueToken().access_token;
  const response = await fetch(`${sandbox.url}/api/v2/webhook`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: new URLSearchParams({ event, callbackUrl: receiver.url }),
  });
  expect(response.status).toBe(200);
  return { sandbox, receiver, token };
}

/** The check a receiver makes, written from docs/upstream.md "Signature" without the project's own code. */
function independentlyValid(header: string, body: Buffer, secret: string): boolean {
  const { timestamp, signature } = JSON.parse(header) as { timestamp: number; signature: string };
  const expected = createHmac('sha256', secret).update(`${timestamp};`).update(body).digest('hex');
  return Number.isInteger(timestamp) && /^[0-9a-f]{64}$/.test(signature) && signature === expected;
}

describe('invoice deliveries', () => {
  it('POSTs {"event","object"} as JSON, signed with the client secret', async () => {
    const { sandbox, receiver } = await setUp(() => 200);
    const delivered = sandbox.control.waitFor('delivery');
    const invoice = sandbox.control.createInvoice({ description: 'Kurs języka polskiego', extraFromTheFuture: { nested: true } });
    const attempt = await delivered;

    expect(attempt).toMatchObject({ event: 'invoice.created', attempt: 1, status: 200, outcome: 'delivered', url: receiver.url });
    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    const header = request.headers['webhook-signature'] as string;
    expect(independentlyValid(header, request.body, SECRET)).toBe(true);
    expect(independentlyValid(header, request.body, 'another-secret')).toBe(false);
    expect(Math.abs(JSON.parse(header).timestamp - Date.now() / 1000)).toBeLessThan(300);

    const body = JSON.parse(request.body.toString('utf8'));
    expect(Object.keys(body)).toEqual(['event', 'object']);
    expect(body.event).toBe('invoice.created');
    expect(body.object).toEqual(invoice);
    expect(Object.keys(body.object)).toEqual([...SPEC_FIELDS.invoice, 'extraFromTheFuture']);
    expect(body.object.extraFromTheFuture).toEqual({ nested: true });
    expect(body.object.description).toBe('Kurs języka polskiego');
    expect(sandbox.control.deliveryLog()).toEqual([attempt]);
  });

  it('fires invoice.updated only to registrations of that event', async () => {
    const { sandbox, receiver } = await setUp(() => 200, {}, 'invoice.updated');
    const invoice = sandbox.control.createInvoice();
    await sandbox.control.idle();
    expect(receiver.received).toHaveLength(0);
    const delivered = sandbox.control.waitFor('delivery');
    const updated = sandbox.control.updateInvoice(invoice.id, { statusOffice: 2, statusOfficeName: 'paid' });
    expect((await delivered).event).toBe('invoice.updated');
    expect(JSON.parse(receiver.received[0]!.body.toString())).toEqual({ event: 'invoice.updated', object: updated });
    expect(() => sandbox.control.updateInvoice(999_999, {})).toThrow(expect.objectContaining({ code: 'sandbox.not_found' }));
  });

  it('does not deliver to a deleted registration', async () => {
    const { sandbox, receiver, token } = await setUp(() => 200);
    const [webhook] = sandbox.control.webhooks();
    await fetch(`${sandbox.url}/api/v2/webhook?id=${webhook!.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(sandbox.control.fireEvent('invoice.created', { id: 1 })).toBe(0);
    await sandbox.control.idle();
    expect(receiver.received).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a 500 on the scaled back-off schedule until 200, re-signing each attempt, logging every attempt', async () => {
    // Every time the sandbox reads its clock a second passes, so each attempt has its own timestamp.
    let now = Date.UTC(2026, 10, 22, 9, 0, 0);
    const clock = { now: () => (now += 1000), sleep: systemClock.sleep };
    const { sandbox, receiver } = await setUp((_request, index) => (index < 3 ? 500 : 200), { clock });
    const delivered = sandbox.control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered');
    sandbox.control.createInvoice();
    await delivered;

    const log = sandbox.control.deliveryLog();
    expect(log.map((entry) => [entry.attempt, entry.status, entry.outcome])).toEqual([
      [1, 500, 'retry'], [2, 500, 'retry'], [3, 500, 'retry'], [4, 200, 'delivered'],
    ]);
    const schedule = deliverySchedule(0.0001);
    expect(log.map((entry) => entry.nextAttemptInMs)).toEqual([schedule[0], schedule[1], schedule[2], null]);
    expect(new Set(log.map((entry) => entry.deliveryId)).size).toBe(1);

    expect(receiver.received).toHaveLength(4);
    const timestamps = receiver.received.map((request) => JSON.parse(request.headers['webhook-signature'] as string).timestamp);
    for (let i = 1; i < timestamps.length; i++) expect(timestamps[i]).toBeGreaterThan(timestamps[i - 1]);
    for (const request of receiver.received) {
      expect(independentlyValid(request.headers['webhook-signature'] as string, request.body, SECRET)).toBe(true);
      expect(request.body.equals(receiver.received[0]!.body)).toBe(true);
    }
    expect(log.map((entry) => entry.signatureHeader)).toEqual(receiver.received.map((request) => request.headers['webhook-signature']));
  });

  it.each([201, 204, 302, 404])('treats %i as a failure (only 200 counts)', async (status) => {
    const { sandbox } = await setUp((_request, index) => (index === 0 ? status : 200));
    const delivered = sandbox.control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered');
    sandbox.control.fireEvent('invoice.created', { id: 5 });
    expect((await delivered).attempt).toBe(2);
    expect(sandbox.control.deliveryLog()[0]).toMatchObject({ status, outcome: 'retry' });
  });

  it('retries a callback that does not answer in time', async () => {
    const { sandbox } = await setUp((_request, index) => (index === 0 ? 'hang' : 200), { deliveryTimeoutMs: 200 });
    const delivered = sandbox.control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered');
    sandbox.control.createInvoice();
    await delivered;
    const [first] = sandbox.control.deliveryLog();
    expect(first).toMatchObject({ attempt: 1, status: null, outcome: 'retry' });
    expect(first!.error).toEqual(expect.any(String));
  });

  it('retries an unreachable callback and gives up when the 3-day schedule is over', async () => {
    receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close(); // nothing listens there any more
    receiver = undefined;
    sandbox = createSandbox({ students: 1, retryTimeScale: 0.000001 });
    await sandbox.start();
    const failed = sandbox.control.waitFor('delivery', (attempt) => attempt.outcome === 'failed');
    const token = sandbox.control.issueToken().access_token;
    await fetch(`${sandbox.url}/api/v2/webhook`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new URLSearchParams({ event: 'lesson.changed', callbackUrl: url }) });
    sandbox.control.fireEvent('lesson.changed', { id: 1 });
    const last = await failed;
    expect(last.attempt).toBe(deliverySchedule().length + 1);
    expect(sandbox.control.deliveryLog()).toHaveLength(last.attempt);
    expect(sandbox.control.deliveryLog().every((entry) => entry.status === null && entry.error)).toBe(true);
  });

  it('flushDeliveries() retries a delivery waiting for its 30 s back-off now', async () => {
    const { sandbox, receiver } = await setUp((_request, index) => (index === 0 ? 503 : 200), { retryTimeScale: 1 });
    const firstAttempt = sandbox.control.waitFor('delivery');
    sandbox.control.createInvoice();
    expect((await firstAttempt).nextAttemptInMs).toBe(30_000);
    await sandbox.control.flushDeliveries();
    expect(sandbox.control.deliveryLog().map((entry) => entry.outcome)).toEqual(['retry', 'delivered']);
    await sandbox.control.idle();
    expect(receiver.received).toHaveLength(2);
  });

  it('stop() does not wait for a 30 s back-off', async () => {
    const { sandbox } = await setUp(() => 500, { retryTimeScale: 1 });
    const firstAttempt = sandbox.control.waitFor('delivery');
    sandbox.control.createInvoice();
    expect((await firstAttempt).outcome).toBe('retry');
    await sandbox.stop();
    await sandbox.control.idle();
    expect(sandbox.control.deliveryLog()).toHaveLength(1);
  });
});
