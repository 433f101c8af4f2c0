import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox } from '../src/sandbox/index.js';
import { signatureHeader } from '../src/signature/index.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { eventBody, invoice } from './support/webhooks.js';
import { eventually } from './support/net.js';
import { testDatabase } from './support/pg-database.js';
import { startPostgres } from './support/postgres.js';
import { startReplicas, type Replica } from './support/replicas.js';
import { tempDir } from './support/temp.js';

/**
 * Several daemons on one PostgreSQL database, as the README's deployment section runs them: every
 * replica takes webhooks, the database arbitrates deliveries, roles and schedule ticks, and a replica
 * killed with -9 hands its work over to the others.
 */
const SECRET = 'replicas-secret';
const log = pino({ level: 'silent' });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

const readBody = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => resolve(body));
});

/** The accounting receiver: answers 200 and keeps every arrival in order. */
async function accountingReceiver() {
  const arrivals: { key: string; body: string }[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      arrivals.push({ key: String(req.headers['idempotency-key']), body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const url = await listen(server);
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url, arrivals };
}

/** Posts one signed event; resolves with the status and the stored id, or undefined when the replica did not answer. */
async function post(url: string, body: string): Promise<{ status: number; id?: string } | undefined> {
  try {
    const response = await fetch(`${url}/webhooks/v2`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) },
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json().catch(() => ({}))) as { id?: string };
    return { status: response.status, ...(answer.id ? { id: answer.id } : {}) };
  } catch {
    return undefined;
  }
}

const jsonLines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);

function daemonConfig(url: string, out: string, connectors: Record<string, unknown>[] = []) {
  return {
    upstream: { baseUrl: 'sandbox', clientId: 'sandbox-client', clientSecret: SECRET },
    sandbox: { students: 2 },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: { driver: 'postgres', url, poolSize: 6 },
    connectors: [{ name: 'files', type: 'file', streams: ['invoices', 'events'], dir: out }, ...connectors],
    log: { level: 'warn', pretty: false },
  };
}

function stopAll(replicas: Replica[]): () => Promise<unknown> {
  return () => Promise.all(replicas.map((r) => (r.alive() ? r.stop() : undefined)));
}

describe('replicas on one PostgreSQL database', () => {
  it('take 2,000 invoice events, one killed mid-burst and one mid-delivery: each record delivered in order, once, one body', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-replicas-');
    cleanups.push(cleanup);
    const receiver = await accountingReceiver();
    const out = path.join(dir, 'out');
    const url = await testDatabase('replicas');
    const replicas = await startReplicas(dir, 3, daemonConfig(url, out, [{ name: 'books', type: 'accounting', streams: ['invoices'], url: receiver.url, secret: 'books-secret' }]));
    cleanups.push(stopAll(replicas));

    // 1,000 invoices, each created then updated; the update is sent once the create was answered 200.
    const acknowledged = new Map<string, { invoice: number; event: string }>();
    let turn = 0;
    let killedMidBurst = false;
    const sendUntilStored = async (body: string, id: number, event: string) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const live = replicas.filter((r) => r.alive());
        const answer = await post(live[turn++ % live.length]!.url, body);
        if (answer?.status === 200 && answer.id) {
          acknowledged.set(answer.id, { invoice: id, event });
          if (!killedMidBurst && acknowledged.size >= 600) {
            killedMidBurst = true;
            void replicas[0]!.kill();
          }
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`event ${event} of invoice ${id} never acknowledged`);
    };
    let next = 1;
    const sender = async () => {
      for (let id = next++; id <= 1000; id = next++) {
        await sendUntilStored(eventBody('invoice.created', invoice({ id, numberId: id, statusOffice: 1 })), id, 'invoice.created');
        await sendUntilStored(eventBody('invoice.updated', invoice({ id, numberId: id, statusOffice: 2 })), id, 'invoice.updated');
      }
    };
    const killMidDelivery = eventually(() => (receiver.arrivals.length >= 1000 ? true : undefined), 120_000, 'half the deliveries').then(() => replicas[1]!.kill());
    await Promise.all(Array.from({ length: 20 }, sender));
    await killMidDelivery;
    expect(acknowledged.size).toBe(2000);
    expect(replicas.map((r) => r.alive())).toEqual([false, false, true]);

    // The survivor takes over what the killed ones held (their leases, the file connector's role).
    const wanted = [...acknowledged.keys()].map((id) => `invoices:${id}`);
    await eventually(() => {
      const keys = new Set(receiver.arrivals.map((a) => a.key));
      return wanted.every((k) => keys.has(k)) ? true : undefined;
    }, 150_000, `every acknowledged invoice at the receiver (${new Set(receiver.arrivals.map((a) => a.key)).size} of 2000): ${replicas[2]!.output().slice(-1500)}`);
    const lines = await eventually(async () => {
      const [invoices, events] = await Promise.all([jsonLines(path.join(out, 'invoices.jsonl')), jsonLines(path.join(out, 'events.jsonl'))]);
      return invoices.length >= 2000 && events.length >= 2000 ? { invoices, events } : undefined;
    }, 150_000, `every acknowledged event in the files: ${replicas[2]!.output().slice(-2000)}`);

    // Each record under one Idempotency-Key with one body, however often it went out.
    const bodies = new Map<string, Set<string>>();
    for (const { key, body } of receiver.arrivals) bodies.set(key, (bodies.get(key) ?? new Set()).add(body));
    expect([...bodies.values()].filter((b) => b.size > 1)).toEqual([]);
    // An update never overtook its create.
    const firstArrival = new Map<string, number>();
    receiver.arrivals.forEach(({ key }, i) => firstArrival.has(key) || firstArrival.set(key, i));
    const byInvoice = new Map<number, Record<string, number>>();
    for (const [id, { invoice: n, event }] of acknowledged) byInvoice.set(n, { ...byInvoice.get(n), [event]: firstArrival.get(`invoices:${id}`)! });
    const overtaken = [...byInvoice].filter(([, order]) => !(order['invoice.created']! < order['invoice.updated']!));
    expect(overtaken).toEqual([]);
    // No record twice in the files, every acknowledged one there.
    expect(new Set(lines.invoices).size).toBe(lines.invoices.length);
    expect(new Set(lines.events).size).toBe(lines.events.length);
    expect(new Set(lines.invoices)).toEqual(new Set(wanted));
    expect(new Set(lines.events)).toEqual(new Set([...acknowledged.keys()].map((id) => `events:${id}`)));
    expect(await replicas[2]!.stop()).toBe(0);
  }, 300_000);

  it('run each tick of a one-second poll schedule on exactly one of three replicas, also when the last one to run it is killed', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-ticks-');
    cleanups.push(cleanup);
    const sandbox = createSandbox({ students: 3, seed: 2, clientSecret: SECRET, log });
    await sandbox.start();
    cleanups.push(() => sandbox.stop());
    // The sandbox behind a proxy that notes when each students list is read: one read per cycle.
    const reads: number[] = [];
    const proxy = createServer((req, res) => {
      if (req.method === 'GET' && req.url?.startsWith('/api/v2/students')) reads.push(Date.now());
      const target = new URL(req.url ?? '/', sandbox.url);
      const forward = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    });
    const upstream = await listen(proxy);
    cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
    const url = await testDatabase('ticks');
    const config = { ...daemonConfig(url, path.join(dir, 'out')), upstream: { baseUrl: upstream, clientId: 'sandbox-client', clientSecret: SECRET }, poll: { onStart: false, schedule: '* * * * * *' } };
    const replicas = await startReplicas(dir, 3, config);
    cleanups.push(stopAll(replicas));
    // All three are ticking once a few cycles have run.
    await eventually(() => (reads.length >= 3 ? true : undefined), 30_000, 'the first cycles');

    // Ten ticks, from half a second after a whole second: each tick's read falls inside.
    const start = Math.ceil(Date.now() / 1000) * 1000 + 500;
    await new Promise((resolve) => setTimeout(resolve, start - Date.now()));
    const database = new pg.Client({ connectionString: url });
    await database.connect();
    cleanups.push(() => database.end());
    // Between the fifth and the sixth tick, the replica that ran the fifth is killed.
    await new Promise((resolve) => setTimeout(resolve, start + 4_800 - Date.now()));
    const { rows } = await database.query<{ pid: number }>(`SELECT r.pid FROM schoolbridge.tick t JOIN schoolbridge.replica r ON r.id = t.replica WHERE t.job = 'poll'`);
    const last = replicas.find((r) => r.child.pid === rows[0]?.pid);
    expect(last, 'the replica that ran the last tick').toBeDefined();
    await last!.kill();
    await new Promise((resolve) => setTimeout(resolve, start + 10_000 - Date.now()));
    const inWindow = reads.filter((at) => at >= start && at < start + 10_000);
    // The others ran on: none of them fell over meanwhile.
    expect(replicas.filter((r) => r.alive())).toHaveLength(2);
    expect(inWindow, `reads at ${inWindow.map((at) => at - start).join(', ')} ms; ${replicas.map((r) => r.output().slice(-1500)).join('\n---\n')}`).toHaveLength(10);
  }, 120_000);

  it('answer 503 while PostgreSQL is down for 10 s under load, never 200 without a commit, and recover by themselves', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-outage-replicas-');
    cleanups.push(cleanup);
    const server = await startPostgres();
    cleanups.push(() => server.destroy());
    const url = await server.createDatabase('outage');
    const out = path.join(dir, 'out');
    const replicas = await startReplicas(dir, 2, daemonConfig(url, out));
    cleanups.push(stopAll(replicas));

    const answers: { phase: 'before' | 'down' | 'after'; replica: number; status: number | undefined; id?: string }[] = [];
    let phase: 'before' | 'down' | 'after' = 'before';
    let sending = true;
    let n = 0;
    const load = (async () => {
      while (sending) {
        const replica = n % 2;
        const id = (n += 1);
        const answer = await post(replicas[replica]!.url, eventBody('invoice.created', invoice({ id, numberId: id })));
        answers.push({ phase, replica, status: answer?.status, ...(answer?.id ? { id: answer.id } : {}) });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await server.stop();
    phase = 'down';
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await server.start();
    phase = 'after';
    // No restart: both take webhooks again by themselves.
    await eventually(() => ([0, 1].every((r) => answers.some((a) => a.phase === 'after' && a.replica === r && a.status === 200)) ? true : undefined), 60_000, 'both replicas to answer 200 again');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    sending = false;
    await load;

    const down = answers.filter((a) => a.phase === 'down');
    expect(down.length).toBeGreaterThan(20);
    expect(down.filter((a) => a.status === 200)).toEqual([]);
    expect(down.every((a) => a.status === 503)).toBe(true);
    const acknowledged = answers.filter((a) => a.status === 200).map((a) => a.id!);
    expect(acknowledged.length).toBeGreaterThan(40);
    // Every 200 was a commit: the event is in the inbox, and delivered once.
    const store = createPgStore({ url, log, poolSize: 4 });
    await store.start();
    try {
      for (const id of acknowledged) expect(await store.inbox.get(id), id).toBeDefined();
    } finally {
      await store.stop();
    }
    const events = await eventually(async () => {
      const ids = await jsonLines(path.join(out, 'events.jsonl'));
      return acknowledged.every((id) => ids.includes(`events:${id}`)) ? ids : undefined;
    }, 60_000, 'every acknowledged event in the file');
    expect(new Set(events).size).toBe(events.length);
    expect(await Promise.all(replicas.map((r) => r.stop()))).toEqual([0, 0]);
  }, 180_000);

  it('hand a role over at once when its holder stops, and within 60 s when it is killed', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-handover-');
    cleanups.push(cleanup);
    const url = await testDatabase('handover');
    const replicas = await startReplicas(dir, 3, daemonConfig(url, path.join(dir, 'out')));
    cleanups.push(stopAll(replicas));
    const database = new pg.Client({ connectionString: url });
    await database.connect();
    cleanups.push(() => database.end());
    const holder = async () => {
      const { rows } = await database.query<{ pid: number }>(`SELECT r.pid FROM schoolbridge.role o JOIN schoolbridge.replica r ON r.id = o.holder WHERE o.name = 'connector:files'`);
      return replicas.find((r) => r.child.pid === rows[0]?.pid && r.alive());
    };
    // Some work makes a replica take the file connector.
    await post(replicas[0]!.url, eventBody('invoice.created', invoice({ id: 1 })));
    const first = await eventually(holder, 30_000, 'a replica to hold connector:files');

    const stopped = Date.now();
    expect(await first.stop()).toBe(0);
    await post(replicas.find((r) => r.alive())!.url, eventBody('invoice.created', invoice({ id: 2 })));
    const second = await eventually(async () => {
      const now = await holder();
      return now && now !== first ? now : undefined;
    }, 30_000, 'another replica to take connector:files after SIGTERM');
    expect(Date.now() - stopped).toBeLessThan(10_000);

    const killed = Date.now();
    await second.kill();
    await post(replicas.find((r) => r.alive())!.url, eventBody('invoice.created', invoice({ id: 3 })));
    await eventually(async () => {
      const now = await holder();
      return now && now !== second ? now : undefined;
    }, 60_000, 'the last replica to take connector:files after kill -9');
    expect(Date.now() - killed).toBeLessThan(60_000);
    const lines = await eventually(async () => {
      const ids = await jsonLines(path.join(dir, 'out', 'invoices.jsonl'));
      return ids.length === 3 ? ids : undefined;
    }, 30_000, 'the three invoices in the file');
    expect(new Set(lines).size).toBe(3);
  }, 150_000);
});
