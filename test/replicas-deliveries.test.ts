import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { eventBody, invoice } from './support/webhooks.js';
import { eventually } from './support/net.js';
import { ageDeadReplica, testDatabase } from './support/pg-database.js';
import { startPostgres } from './support/postgres.js';
import { startReplicas } from './support/replicas.js';
import { accountingReceiver, cleanups, daemonConfig, jsonLines, log, post, stopAll, useCleanups } from './support/replicas-setup.js';
import { tempDir } from './support/temp.js';

useCleanups();

/**
 * Several daemons on one PostgreSQL database, as the README's deployment section runs them: every
 * replica takes webhooks and answers 200 only once an event is committed; a replica killed with -9,
 * or the database gone for a while, loses no acknowledged event and delivers none twice.
 */
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
            void replicas[0]!.kill().then(() => ageDeadReplica(url, replicas[0]!.child.pid!));
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
    // Each killed replica is then made to look as it does once REPLICA_TTL_MS has passed: what is
    // tested here is that nothing is lost or sent twice or out of order, not how long finding it dead
    // takes (replicas-roles.test.ts waits that out).
    const killMidDelivery = eventually(() => (receiver.arrivals.length >= 1000 ? true : undefined), 120_000, 'half the deliveries')
      .then(() => replicas[1]!.kill()).then(() => ageDeadReplica(url, replicas[1]!.child.pid!));
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
});
