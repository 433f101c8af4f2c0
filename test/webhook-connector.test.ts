import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { webhookConnector } from '../connectors/webhook/index.js';
import { webhookConfigSchema, type WebhookConfig } from '../connectors/webhook/schema.js';
import { StoredRecord } from '../src/connectors/stored-record.js';
import type { ConnectorContext } from '../src/connectors/types.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createOutbox, type Outbox } from '../src/outbox/index.js';
import { verifySignature } from '../src/signature/index.js';
import { ManualClock, change, nextEvent } from './outbox-helpers.js';
import { testStore } from './support/stores.js';

const log = pino({ level: 'silent' });
const SECRET = 'whsec-test';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * How an answer's body is sent: at once; `trickle`, a byte every 20 ms for ever; `endless`, as fast as
 * it is read, for ever. Either of the last two ends only when the client closes the connection.
 */
type BodyStyle = 'whole' | 'trickle' | 'endless';

/** A loopback receiver whose answers the test scripts (status, headers, how its body comes, or no answer at all). */
class Receiver {
  readonly received: Received[] = [];
  respond: (req: Received, n: number) => { status: number; headers?: Record<string, string>; hang?: boolean; body?: BodyStyle } = () => ({ status: 200 });
  /** Answers whose connection the client closed before their body ended, with the bytes they had written. */
  readonly cutOff: number[] = [];
  private readonly cuts = new EventEmitter();
  private server: Server | undefined;
  private readonly waiting: ((r: Received) => void)[] = [];

  /** Resolves once `count` answers have been cut off by the client. */
  async whenCutOff(count: number): Promise<void> {
    while (this.cutOff.length < count) await once(this.cuts, 'cut');
  }

  async start(): Promise<string> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        if (req.method !== 'POST') return void res.writeHead(405).end();
        this.received.push(got);
        this.waiting.splice(0).forEach((w) => w(got));
        const answer = this.respond(got, this.received.length);
        if (answer.hang) return;
        if (answer.body === 'trickle' || answer.body === 'endless') return this.stream(res, answer.status, answer.body);
        res.writeHead(answer.status, answer.headers).end(`status ${answer.status}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  private stream(res: ServerResponse, status: number, style: 'trickle' | 'endless'): void {
    let written = 0;
    res.writeHead(status, { 'content-type': 'text/plain' });
    const chunk = style === 'trickle' ? 'x' : 'y'.repeat(16_384);
    const timer = setInterval(() => {
      if (style === 'endless' && res.writableNeedDrain) return;
      res.write(chunk);
      written += chunk.length;
    }, style === 'trickle' ? 20 : 1);
    res.on('close', () => {
      clearInterval(timer);
      if (!res.writableFinished) {
        this.cutOff.push(written);
        this.cuts.emit('cut');
      }
    });
  }

  nextRequest(): Promise<Received> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

let receiver: Receiver;
let url: string;
let dispatcher: Agent;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  receiver = new Receiver();
  url = await receiver.start();
  dispatcher = new Agent({ keepAliveTimeout: 1000 });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await receiver.stop();
  await dispatcher.close();
});

function config(patch: Partial<WebhookConfig> = {}): WebhookConfig {
  return webhookConfigSchema.parse({ name: 'hook', type: 'webhook', streams: ['students', 'users'], url, secret: SECRET, ...patch });
}

function context(clock = new ManualClock(), patch: Partial<WebhookConfig> = {}): ConnectorContext<WebhookConfig> {
  return { config: config(patch), dispatcher, clock, log, signal: new AbortController().signal, metrics: createMetricsRegistry(), cache: new Map() };
}

/** An outbox on a real SQLite store; the store and the outbox share the test's clock. */
async function outboxWith(clock: ManualClock, patch: Partial<WebhookConfig> = {}): Promise<Outbox> {
  const { store, cleanup } = await testStore('sqlite', { clock });
  cleanups.push(cleanup);
  const cfg = config(patch);
  const outbox = createOutbox({
    store: store.outbox,
    connectors: [{ name: 'hook', streams: cfg.streams, config: cfg, connector: webhookConnector }],
    delivery: { maxAgeHours: 72, backoff: { baseMs: 1000, maxMs: 60_000 } },
    clock,
    dispatcher,
    log,
    metrics: createMetricsRegistry(),
    random: () => 0,
    checkIntervalMs: 0,
  });
  cleanups.push(() => outbox.stop());
  await outbox.start();
  return outbox;
}

describe('webhook connector', () => {
  it('POSTs the record as JSON, signed like the upstream, with its id as Idempotency-Key and the extra headers', async () => {
    const clock = new ManualClock();
    const record = change('students', 12, 'created');
    const outcomes = await webhookConnector.deliver(context(clock, { headers: { 'X-Api-Key': 'k1', 'Idempotency-Key': 'forged' } }), [StoredRecord.of(record)]);
    expect(outcomes).toEqual([{ status: 'done', httpStatus: 200 }]);
    const [got] = receiver.received;
    expect(JSON.parse(got!.body)).toEqual(record);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['idempotency-key']).toBe(record.id);
    expect(got!.headers['x-api-key']).toBe('k1');
    const verified = verifySignature([SECRET], got!.headers['webhook-signature'], Buffer.from(got!.body), clock.now(), 300);
    expect(verified).toEqual({ ok: true, timestamp: Math.floor(clock.now() / 1000), secretIndex: 0 });
    expect(verifySignature(['other'], got!.headers['webhook-signature'], Buffer.from(got!.body), clock.now(), 300).ok).toBe(false);
  });

  it('POSTs the stored JSON text as the body, byte for byte, and signs those bytes', async () => {
    // A number spelt 1.50, spaces after separators and \u escapes: JSON.stringify of the parsed record
    // writes each of them differently, so only the stored text itself matches. "Żółta" is raw UTF-8.
    const clock = new ManualClock();
    const id = 'users:9:000000000001';
    const json = `{"id":"${id}", "stream":"users", "key":9, "fee":1.50, "city":"\\u0141\\u00f3d\\u017a", "street":"Żółta 1"}`;
    const stored = new StoredRecord(id, 'users', json);
    expect(JSON.stringify(stored.record)).not.toBe(json);
    expect(await webhookConnector.deliver(context(clock), [stored])).toEqual([{ status: 'done', httpStatus: 200 }]);
    const [got] = receiver.received;
    expect(got!.body).toBe(json);
    expect(got!.headers['idempotency-key']).toBe(id);
    expect(verifySignature([SECRET], got!.headers['webhook-signature'], Buffer.from(json, 'utf8'), clock.now(), 300).ok).toBe(true);
  });

  it.each([
    [200, 'done'],
    [204, 'done'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [400, 'dead'],
    [401, 'dead'],
    [404, 'dead'],
    [410, 'dead'],
    [422, 'dead'],
  ])('answer %i → %s', async (status, expected) => {
    receiver.respond = () => ({ status });
    const [outcome] = await webhookConnector.deliver(context(), [StoredRecord.of(change('users', 1))]);
    expect(outcome!.status).toBe(expected);
    if (outcome!.status !== 'done') expect(outcome!.error.status).toBe(status);
  });

  it('a receiver that does not answer in time is a retry', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const [outcome] = await webhookConnector.deliver(context(new ManualClock(), { timeoutMs: 200 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.network' } });
  });

  it('an unreachable receiver is a retry and fails its check', async () => {
    await receiver.stop();
    const ctx = context();
    const [outcome] = await webhookConnector.deliver(ctx, [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.network' } });
    expect(await webhookConnector.check(ctx)).toMatchObject({ ok: false, reason: expect.stringContaining('cannot reach http://127.0.0.1:') });
  });

  it('a receiver that answers 200 and trickles its body: done at the deadline, one POST, its connection dropped', async () => {
    receiver.respond = () => ({ status: 200, body: 'trickle' });
    const [outcome] = await webhookConnector.deliver(context(new ManualClock(), { timeoutMs: 300 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toEqual({ status: 'done', httpStatus: 200 });
    await receiver.whenCutOff(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('an answer that never ends is read up to its first 512 bytes, then dropped', async () => {
    receiver.respond = () => ({ status: 503, body: 'endless' });
    const [outcome] = await webhookConnector.deliver(context(new ManualClock(), { timeoutMs: 60_000 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.unavailable', message: `the receiver answered 503: ${'y'.repeat(200)}` } });
    await receiver.whenCutOff(1);
  });

  it('check passes when the endpoint answers at all', async () => {
    expect(await webhookConnector.check(context())).toEqual({ ok: true });
  });
});

describe('webhook connector through the outbox', () => {
  it('503 for a while, then 200: delivered once, with the same Idempotency-Key every time', async () => {
    const clock = new ManualClock();
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
    const clock = new ManualClock();
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
    const clock = new ManualClock();
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

  it('429 with Retry-After: not tried again before the receiver said', async () => {
    const clock = new ManualClock();
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
    const clock = new ManualClock();
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
});
