import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { webhookConnector } from '../../connectors/webhook/index.js';
import { webhookConfigSchema, type WebhookConfig } from '../../connectors/webhook/schema.js';
import type { ConnectorContext } from '../../src/connectors/types.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { createOutbox, type Outbox } from '../../src/outbox/index.js';
import { testStore } from './stores.js';
import { TEST_NOW_MS, testClock, type TestClock } from './clock.js';

/**
 * The webhook connector's tests: `useReceiver()` gives each test a loopback receiver the test scripts
 * and an agent to reach it, both closed after the test with whatever outbox and store it made.
 */
const log = pino({ level: 'silent' });
export const SECRET = 'whsec-test';

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
export class Receiver {
  readonly received: Received[] = [];
  /** The headers of each request that was not a POST (a check's HEAD), answered 405. */
  readonly probes: IncomingMessage['headers'][] = [];
  respond: (req: Received, n: number) => { status: number; headers?: Record<string, string>; hang?: boolean; delayMs?: number; body?: BodyStyle } = () => ({ status: 200 });
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
        if (req.method !== 'POST') {
          this.probes.push(got.headers);
          return void res.writeHead(405).end();
        }
        this.received.push(got);
        this.waiting.splice(0).forEach((w) => w(got));
        const answer = this.respond(got, this.received.length);
        if (answer.hang) return;
        if (answer.body === 'trickle' || answer.body === 'endless') return this.stream(res, answer.status, answer.body);
        const send = () => res.writeHead(answer.status, answer.headers).end(`status ${answer.status}`);
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
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

/** The receiver of the running test; new for each test, as are the URL it takes POSTs at and the agent that reaches it. */
export let receiver: Receiver;
let url: string;
let dispatcher: Agent;
const cleanups: (() => Promise<void>)[] = [];

/**
 * Registers the receiver's hooks in the calling test file: call it once, at the file's top
 * (test/support-hooks.test.ts says why not on import).
 */
export function useReceiver(): void {
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
}

function config(patch: Partial<WebhookConfig> = {}): WebhookConfig {
  return webhookConfigSchema.parse({ name: 'hook', type: 'webhook', streams: ['students', 'users'], url, secret: SECRET, ...patch });
}

/** What the connector is given: a config aimed at the receiver and signed with SECRET, patched by `patch`. */
export function context(clock = testClock(TEST_NOW_MS, { sleep: 'timers' }), patch: Partial<WebhookConfig> = {}): ConnectorContext<WebhookConfig> {
  return { config: config(patch), dispatcher, clock, log, signal: new AbortController().signal, metrics: createMetricsRegistry(), cache: new Map() };
}

/** An outbox on a real SQLite store; the store and the outbox share the test's clock. */
export async function outboxWith(clock: TestClock, patch: Partial<WebhookConfig> = {}, options: { leasesStand?: () => boolean } = {}): Promise<Outbox> {
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
    ...(options.leasesStand ? { leasesStand: options.leasesStand } : {}),
  });
  cleanups.push(() => outbox.stop());
  await outbox.start();
  return outbox;
}
