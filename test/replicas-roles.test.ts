import { createServer, request as httpRequest, type Server } from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createSandbox } from '../sandbox/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { eventually } from './support/net.js';
import { testDatabase } from './support/pg-database.js';
import { startReplicas } from './support/replicas.js';
import { cleanups, daemonConfig, jsonLines, listen, log, post, SECRET, stopAll, useCleanups } from './support/replicas-setup.js';
import { tempDir } from './support/temp.js';

useCleanups();

/**
 * Several daemons on one PostgreSQL database: the database arbitrates schedule ticks and connector
 * roles, and a replica stopped or killed with -9 hands its ticks and roles over to the others.
 */
describe('replicas on one PostgreSQL database', () => {
  it('run each tick of a two-second poll schedule on exactly one of three replicas, also when the last one to run it is killed', async () => {
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
    keepAliveAsPromised(proxy);
    const upstream = await listen(proxy);
    cleanups.push(() => new Promise((resolve) => {
      proxy.closeAllConnections();
      proxy.close(resolve);
    }));
    const url = await testDatabase('ticks');
    const config = { ...daemonConfig(url, path.join(dir, 'out')), upstream: { baseUrl: upstream, clientId: 'sandbox-client', clientSecret: SECRET }, poll: { onStart: false, schedule: '*/2 * * * * *' } };
    const replicas = await startReplicas(dir, 3, config);
    cleanups.push(stopAll(replicas));
    // All three are ticking once a few cycles have run.
    await eventually(() => (reads.length >= 3 ? true : undefined), 30_000, 'the first cycles');

    // Ten ticks, from a second before one: each tick's read falls inside. A tick finds the run of the
    // one before still going when that run takes longer than the period (a read retried after a
    // reset, a run slowed by a busy machine) and is skipped by design: two seconds leave room for it.
    const period = 2_000;
    const start = Math.ceil(Date.now() / period) * period + period / 2;
    await new Promise((resolve) => setTimeout(resolve, start - Date.now()));
    const database = new pg.Client({ connectionString: url });
    await database.connect();
    cleanups.push(() => database.end());
    // Between the fifth and the sixth tick, the replica that ran the fifth is killed.
    await new Promise((resolve) => setTimeout(resolve, start + 4 * period + 1_800 - Date.now()));
    const { rows } = await database.query<{ pid: number }>(`SELECT r.pid FROM schoolbridge.tick t JOIN schoolbridge.replica r ON r.id = t.replica WHERE t.job = 'poll'`);
    const last = replicas.find((r) => r.child.pid === rows[0]?.pid);
    expect(last, 'the replica that ran the last tick').toBeDefined();
    await last!.kill();
    await new Promise((resolve) => setTimeout(resolve, start + 10 * period - Date.now()));
    const inWindow = reads.filter((at) => at >= start && at < start + 10 * period);
    // The others ran on: none of them fell over meanwhile.
    expect(replicas.filter((r) => r.alive())).toHaveLength(2);
    expect(inWindow, `reads at ${inWindow.map((at) => at - start).join(', ')} ms; ${replicas.map((r) => r.output().slice(-1500)).join('\n---\n')}`).toHaveLength(10);
  }, 120_000);

  it('run a scheduled tick on another replica when the one that claimed it is killed before its run ended', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-tick-handover-');
    cleanups.push(cleanup);
    const sandbox = createSandbox({ students: 3, seed: 4, clientSecret: SECRET, log });
    await sandbox.start();
    cleanups.push(() => sandbox.stop());
    // The students list is held unanswered until the replica reading it is killed: it dies mid-run.
    let holding = true;
    const readers: number[] = [];
    const proxy = createServer((req, res) => {
      if (req.method === 'GET' && req.url?.startsWith('/api/v2/students')) {
        readers.push(req.socket.remotePort ?? 0);
        if (holding) return;
      }
      const forward = httpRequest(new URL(req.url ?? '/', sandbox.url), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    });
    keepAliveAsPromised(proxy);
    const upstream = await listen(proxy);
    cleanups.push(() => new Promise((resolve) => {
      proxy.closeAllConnections();
      proxy.close(resolve);
    }));
    const url = await testDatabase('tick_handover');
    // One tick, once a day, late enough for both replicas to have started.
    const tick = new Date(Math.ceil((Date.now() + 30_000) / 1000) * 1000);
    const schedule = `${tick.getUTCSeconds()} ${tick.getUTCMinutes()} ${tick.getUTCHours()} * * *`;
    const config = { ...daemonConfig(url, path.join(dir, 'out')), upstream: { baseUrl: upstream, clientId: 'sandbox-client', clientSecret: SECRET }, poll: { onStart: false, schedule, timezone: 'UTC' } };
    const replicas = await startReplicas(dir, 2, config);
    cleanups.push(stopAll(replicas));
    expect(Date.now(), 'both replicas started before the tick').toBeLessThan(tick.getTime() - 2_000);
    const database = new pg.Client({ connectionString: url });
    await database.connect();
    cleanups.push(() => database.end());
    const claim = () => database.query<{ slot: number; pid: number; id: string; done_at: string | null }>(
      `SELECT t.slot, r.pid, r.id, t.done_at FROM schoolbridge.tick t JOIN schoolbridge.replica r ON r.id = t.replica WHERE t.job = 'poll'`);
    await eventually(() => (readers.length > 0 ? true : undefined), 45_000, 'the tick\'s read of the students list');
    const { rows: [first] } = await claim();
    expect(Number(first?.slot)).toBe(tick.getTime());
    const winner = replicas.find((r) => r.child.pid === first?.pid)!;
    const other = replicas.find((r) => r !== winner)!;
    await winner.kill();
    holding = false;
    // The other claims the tick again once the killed one would be found dead, and runs it.
    const done = await eventually(async () => {
      const { rows: [now] } = await claim();
      return now && now.pid === other.child.pid && now.done_at !== null ? now : undefined;
    }, 75_000, () => `the other replica to run the tick: ${other.output().slice(-1500)}`);
    expect(Number(done.slot)).toBe(tick.getTime());
    // The run's row in the history commits before the tick's end is noted: it is there already.
    const { rows: runs } = await database.query<{ outcome: string; replica: string; trigger: string }>(`SELECT outcome, replica, trigger FROM schoolbridge.run WHERE kind = 'poll'`);
    expect(runs).toEqual([{ outcome: 'ok', replica: done.id, trigger: 'schedule' }]);
    expect(readers).toHaveLength(2);
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

/**
 * The proxies pass on the sandbox's answers with their `Keep-Alive: timeout=72` header: a proxy that
 * closed idle sockets sooner (Node's default is 5 s) would reset a replica's next request on one, and
 * the retry could push a run past the next tick.
 */
function keepAliveAsPromised(proxy: Server): void {
  proxy.keepAliveTimeout = 120_000;
}
