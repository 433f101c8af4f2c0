import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { roleDatabase, testDatabase, withClient } from '../../../test/support/pg-database.js';
import { describeStoreConformance, event, freshRows, record } from '../conformance.js';
import { describeHistoryConformance } from '../conformance-history.js';
import { createPool, fillPool } from './db.js';
import { openStore } from '../open.js';
import { systemClock } from '../../clock.js';
import type { Store } from '../port.js';
import { OWN_LEASES_MS, REPLICA_TTL_MS } from '../tables.js';
import { createPgStore } from './pg-store.js';
import { SCHEMA_VERSION } from './schema.js';

const log = pino({ level: 'silent' });
let last = '';
/**
 * The smallest pool the config allows: a store opens all of its connections at start, and the
 * conformance suite starts a store or two per case.
 */
const poolSize = 4;

const postgres = {
  async open(options = {}) {
    last = await testDatabase('conf');
    return createPgStore({ url: last, log, poolSize, ...options });
  },
  async second() {
    return createPgStore({ url: last, log, poolSize });
  },
};

describeStoreConformance('postgres', postgres);
describeHistoryConformance('postgres', postgres);

describe('postgres schema', () => {
  it('is created once when several replicas start on an empty database at the same moment', async () => {
    const url = await testDatabase('migrate');
    const stores = [1, 2, 3, 4].map(() => createPgStore({ url, log }));
    try {
      await Promise.all(stores.map((store) => store.start()));
      const { rows } = await withClient(url, (client) => client.query<{ version: number }>('SELECT version FROM schoolbridge.migrations ORDER BY version'));
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      expect(await stores[3]!.inbox.accept(event('one'), [])).toBe('stored');
      expect(await stores[0]!.inbox.accept(event('one'), [])).toBe('duplicate');
    } finally {
      await Promise.all(stores.map((store) => store.stop()));
    }
  });

  it('refuses a database whose schema is newer than this version knows', async () => {
    const url = await testDatabase('newer');
    const store = createPgStore({ url, log });
    await store.start();
    await store.stop();
    await withClient(url, (client) => client.query(`INSERT INTO schoolbridge.migrations (version) VALUES (${SCHEMA_VERSION + 1})`));
    await expect(createPgStore({ url, log }).start()).rejects.toMatchObject({ code: 'store.schema_newer' });
  });
});

/**
 * Ends the sessions that hold advisory locks (the staging locks), as a network cut or a killed
 * process would, and returns once they have ended: pg_terminate_backend only signals a session
 * unless it is given a time to wait, and its locks go only as it exits.
 */
async function endSessionsHoldingAdvisoryLocks(url: string): Promise<void> {
  const { rows } = await withClient(url, (admin) => admin.query<{ ended: boolean }>(`SELECT pg_terminate_backend(pid, 10000) AS ended
    FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()) holders`));
  expect(rows.length).toBeGreaterThan(0);
  expect(rows.every((r) => r.ended)).toBe(true);
}

describe('postgres poll staging', () => {
  const rows = (n: number, from = 1) => freshRows(Array.from({ length: n }, (_, i) => ({ key: from + i, chain: `c${String(from + i).padStart(11, '0')}`, json: `{"id":${from + i}}` })));

  /** Two processes' stores on one new database, both stopped after `body`. */
  async function withTwoStores(name: string, body: (first: Store, second: Store, url: string) => Promise<void>): Promise<void> {
    const url = await testDatabase(name);
    const [first, second] = [createPgStore({ url, log, poolSize: 4 }), createPgStore({ url, log, poolSize: 4 })];
    await first.start();
    await second.start();
    try {
      await body(first, second, url);
    } finally {
      await first.stop();
      await second.stop();
    }
  }

  it("refuses a second process's cycle while one stages a stream, and leaves the first one's rows alone", () =>
    withTwoStores('staging', async (first, second) => {
      await first.snapshot.begin('students', 'fresh');
      await first.snapshot.stageFresh('students', rows(3));
      await expect(second.snapshot.begin('students', 'fresh')).rejects.toMatchObject({ code: 'poll.busy', retryable: true });
      // The refused cycle cleans up after itself: nothing of the first one's is dropped.
      await second.snapshot.discard('students');
      // Another stream is free.
      await second.snapshot.begin('users', 'fresh');
      await second.snapshot.discard('users');
      await first.snapshot.stageFresh('students', rows(2, 4));
      await first.snapshot.applyFresh('students', { state: {} });
      expect([...(await first.snapshot.index('students')).keys]).toEqual([1, 2, 3, 4, 5]);
      // Applied: the stream is free for the next cycle, whichever process runs it.
      await second.snapshot.begin('students', 'changes');
      await second.snapshot.discard('students');
    }));

  it('gives a cycle the staging of all its streams or of none, so that two cycles started at once never refuse each other', () =>
    withTwoStores('staging', async (first, second) => {
      // The first cycle began with its users list, the second reserves both streams: refused,
      // it holds neither, and the first one goes on to stage its students.
      await first.snapshot.begin('users', 'fresh');
      await expect(second.snapshot.reserve(['users', 'students'])).rejects.toMatchObject({ code: 'poll.busy', retryable: true });
      await first.snapshot.reserve(['students', 'users']);
      await first.snapshot.begin('students', 'fresh');
      await first.snapshot.stageFresh('students', rows(2));
      await first.snapshot.applyFresh('students', { state: {} });
      // A stream reserved but never begun is given back by its discard.
      await first.snapshot.discard('users');
      await second.snapshot.reserve(['students', 'users']);
      await expect(first.snapshot.reserve(['users'])).rejects.toMatchObject({ code: 'poll.busy' });
      await second.snapshot.discard('students');
      await second.snapshot.discard('users');
      await first.snapshot.reserve(['users', 'students']);
      await first.snapshot.discard('users');
      await first.snapshot.discard('students');
    }));

  it('frees a stream when the process staging it stops or loses its connection', () =>
    withTwoStores('staging', async (first, second, url) => {
      await first.snapshot.begin('users', 'fresh');
      await expect(second.snapshot.begin('users', 'fresh')).rejects.toMatchObject({ code: 'poll.busy' });
      // Its session ends as a killed process's would.
      await endSessionsHoldingAdvisoryLocks(url);
      await second.snapshot.begin('users', 'fresh');
      await second.snapshot.stageFresh('users', rows(2));
      await second.snapshot.applyFresh('users', { state: {} });
      expect(await second.snapshot.size('users')).toBe(2);
      await first.stop();
      await second.snapshot.begin('students', 'fresh');
      await second.snapshot.discard('students');
    }));

  it('fences a cycle that lost its turn: it cannot stage, apply or discard over the one that took over', () =>
    withTwoStores('fence', async (first, second, url) => {
      const seed = (n: number) => [{ key: n, chain: `c${String(n).padStart(11, '0')}`, body: `{"id":${n}}`, rawHash: `h${n}` }];
      await first.snapshot.begin('students', 'fresh');
      await first.snapshot.stageFresh('students', rows(3));
      await first.snapshot.applyFresh('students', { state: {} });
      // The first process's next cycle loses its staging session (as a network cut would) ...
      await first.snapshot.begin('students', 'changes');
      await first.snapshot.stageChanges('students', seed(10));
      await endSessionsHoldingAdvisoryLocks(url);
      // ... and the second process's cycle takes the stream over.
      await second.snapshot.begin('students', 'changes');
      await second.snapshot.stageChanges('students', seed(20));
      await expect(first.snapshot.stageChanges('students', seed(11))).rejects.toMatchObject({ code: 'poll.fenced' });
      await expect(first.snapshot.applyChanges('students', { limit: 10, connectors: [], state: {}, now: 0 })).rejects.toMatchObject({ code: 'poll.fenced' });
      await first.snapshot.discard('students');
      expect(await second.snapshot.applyChanges('students', { limit: 10, connectors: [], state: {}, now: 0 })).toEqual({ applied: 1, done: true });
      expect([...(await second.snapshot.index('students')).keys]).toEqual([1, 2, 3, 20]);
    }));

  it('refuses a fresh apply whose staging another cycle took over and swapped in, as fenced', () =>
    withTwoStores('fence_fresh', async (first, second, url) => {
      await first.snapshot.begin('students', 'fresh');
      await first.snapshot.stageFresh('students', rows(3));
      await endSessionsHoldingAdvisoryLocks(url);
      await second.snapshot.begin('students', 'fresh');
      await second.snapshot.stageFresh('students', rows(5));
      await second.snapshot.applyFresh('students', { state: {} });
      // The staged table the first cycle would vacuum and swap in is gone: it was the second's, now the snapshot.
      await expect(first.snapshot.applyFresh('students', { state: {} })).rejects.toMatchObject({ code: 'poll.fenced' });
      expect([...(await second.snapshot.index('students')).keys]).toEqual([1, 2, 3, 4, 5]);
    }));
});

describe('postgres leases of a replica that stopped', () => {
  it('another replica\'s sweep returns them once the heartbeat is gone; its own never does', async () => {
    const url = await testDatabase('stopped');
    const [first, second] = [createPgStore({ url, log, poolSize: 4 }), createPgStore({ url, log, poolSize: 4 })];
    await first.start();
    await second.start();
    try {
      await first.outbox.enqueue([record('h1', 'k:h')]);
      const now = Date.now();
      expect(await first.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 600_000 })).toHaveLength(1);
      await first.replicas.beat(now);
      await second.replicas.beat(now + 40_000);
      // Forty seconds on, the first replica's heartbeat is stale: its own sweep keeps its lease, the other's returns it.
      expect(await first.outbox.sweep(now + 40_000)).toEqual({ reclaimed: 0 });
      expect(await second.outbox.sweep(now + 40_000)).toEqual({ reclaimed: 1 });
      expect((await second.outbox.claim({ connector: 'a', limit: 10, now: now + 40_000, leaseMs: 600_000 })).map((c) => c.delivery.recordId)).toEqual(['h1']);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('stand for a replica only while its last heartbeat is younger than OWN_LEASES_MS, a margin short of the others\' sweep', async () => {
    let now = Date.now();
    const store = createPgStore({ url: await testDatabase('stand'), log, poolSize: 4, clock: { ...systemClock, now: () => now } });
    await store.start();
    try {
      const beatAt = now;
      expect(store.leasesStand(now)).toBe(true);
      expect(store.leasesStand(beatAt + OWN_LEASES_MS - 1)).toBe(true);
      expect(store.leasesStand(beatAt + OWN_LEASES_MS)).toBe(false);
      expect(OWN_LEASES_MS).toBeLessThan(REPLICA_TTL_MS);
      // A heartbeat that reaches the database makes them stand again.
      now = beatAt + REPLICA_TTL_MS;
      await store.advertise('http://127.0.0.1:1');
      expect(store.leasesStand(now)).toBe(true);
    } finally {
      await store.stop();
    }
  });
});

describe('postgres per-key order under races', () => {
  it('sends a delivery left waiting behind no head (an enqueue and a settle that crossed) first, still in order', async () => {
    const url = await testDatabase('orphan');
    const store = createPgStore({ url, log, poolSize: 4 });
    await store.start();
    try {
      await store.outbox.enqueue([record('v1', 'invoices:1'), record('v2', 'invoices:1')]);
      // What the race leaves: the head gone (its settlement did not see v2, not yet committed), v2 still waiting.
      await withClient(url, (admin) => admin.query(`DELETE FROM schoolbridge.outbox_delivery WHERE id = 'a:v1'`));
      // A later record of the key waits behind v2, though no head is there.
      await store.outbox.enqueue([record('v3', 'invoices:1')]);
      const now = Date.now() + 60_000;
      expect(await store.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 60_000 })).toEqual([]);
      expect((await store.outbox.sweep(now)).reclaimed).toBe(1);
      const [first] = await store.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 60_000 });
      expect(first?.delivery.id).toBe('a:v2');
      await store.outbox.settle([{ id: 'a:v2', fence: first!.delivery.fence, connector: 'a', status: 'done', at: now }]);
      const [second] = await store.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 60_000 });
      expect(second?.delivery.id).toBe('a:v3');
    } finally {
      await store.stop();
    }
  });
});

describe('postgres first-cycle ranges', () => {
  it('puts a created change behind a delivery of its key left waiting behind no head', async () => {
    const url = await testDatabase('orphan_range');
    const store = createPgStore({ url, log, poolSize: 4 });
    await store.start();
    const change = (id: string) => ({ id, stream: 'users' as const, orderKey: 'users:2', json: `{"op":"${id}"}`, connectors: ['a'] });
    try {
      await store.outbox.enqueue([change('v1'), change('v2')]);
      // What an enqueue and a settlement that crossed leave: v2 waiting, its head gone.
      await withClient(url, (admin) => admin.query(`DELETE FROM schoolbridge.outbox_delivery WHERE id = 'a:v1'`));
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows([1, 2].map((key) => ({ key, chain: `c${String(key).padStart(11, '0')}`, json: `{"id":${key}}` }))));
      const now = Date.now() + 1000;
      await store.snapshot.applyFresh('users', { state: {}, created: { detectedAt: 'T0', connectors: ['a'], now } });
      const claim = () => store.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 60_000 });
      expect((await claim()).map((c) => c.created?.key)).toEqual([1]);
      expect((await store.outbox.sweep(now)).reclaimed).toBe(1);
      const [waiting] = await claim();
      expect(waiting?.json).toBe('{"op":"v2"}');
      await store.outbox.settle([{ id: 'a:v2', fence: waiting!.delivery.fence, connector: 'a', status: 'done', at: now }]);
      expect((await claim()).map((c) => c.created?.key)).toEqual([2]);
    } finally {
      await store.stop();
    }
  });
});

describe('postgres and the disk', () => {
  it('asks the server to write out what the store writes as it goes', async () => {
    const pool = createPool(await testDatabase('flush'), 1);
    try {
      const { rows } = await pool.query<{ backend_flush_after: string }>('SHOW backend_flush_after');
      expect(rows[0]!.backend_flush_after).toBe('256kB');
    } finally {
      await pool.end();
    }
  });

  it('swaps in a fresh snapshot vacuumed: every page already all-visible, nothing left for a reader or autovacuum to rewrite', async () => {
    const url = await testDatabase('fresh_vacuum');
    const store = createPgStore({ url, log, poolSize: 4 });
    await store.start();
    try {
      await store.snapshot.begin('users', 'fresh');
      const keys = Array.from({ length: 500 }, (_, i) => i + 1);
      await store.snapshot.stageFresh('users', freshRows(keys.map((key) => ({ key, chain: `c${String(key).padStart(11, '0')}`, json: `{"id":${key},"name":"${'x'.repeat(100)}"}` }))));
      await store.snapshot.applyFresh('users', { state: {} });
      const { rows: [table] } = await withClient(url, (admin) => admin.query<{ relpages: number; relallvisible: number; reltuples: number }>(
        `SELECT relpages, relallvisible, reltuples FROM pg_class WHERE oid = 'schoolbridge.snapshot_users'::regclass`));
      expect(table!.relpages).toBeGreaterThan(1);
      expect(table!.relallvisible).toBe(table!.relpages);
      expect(table!.reltuples).toBe(500);
      expect((await store.snapshot.scan('users', undefined, 1000)).map((r) => r.key)).toEqual(keys);
    } finally {
      await store.stop();
    }
  });
});

describe('postgres that cannot write', () => {
  it('says the store cannot write while the database is read-only (a standby after a failover), and heals by itself', async () => {
    const url = await testDatabase('read_only');
    const database = new URL(url).pathname.slice(1);
    const store = createPgStore({ url, log, poolSize: 4, heartbeatMs: 50 });
    // As a failover onto a standby does: every new session is read-only; those open are ended.
    const readOnly = (on: boolean) => withClient(url, async (admin) => {
      await admin.query('SET default_transaction_read_only = off');
      await admin.query(`ALTER DATABASE ${database} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
    });
    await store.start();
    try {
      await readOnly(true);
      await expect.poll(() => store.health(), { timeout: 10_000 }).toMatchObject({ ok: false, reason: expect.stringMatching(/read-only/) });
      await expect(store.state.put({ probe: 'x' })).rejects.toMatchObject({ code: 'store.unavailable', retryable: true });
      await readOnly(false);
      await expect.poll(() => store.health(), { timeout: 10_000 }).toEqual({ ok: true });
    } finally {
      await store.stop();
    }
  });
});

describe('postgres connections', () => {
  it('reads sslmode as libpq does, with no warning, and says what to do when the server offers no SSL', async () => {
    const url = await testDatabase('ssl_mode');
    const warnings: string[] = [];
    const warned = (warning: Error) => void warnings.push(warning.message);
    process.on('warning', warned);
    try {
      const asks = createPgStore({ url: `${url}?sslmode=require`, log, poolSize: 4, connectTimeoutMs: 100 });
      await expect(asks.start()).rejects.toThrow(/^cannot open the PostgreSQL store \(store\.url\): The server does not support SSL connections; store\.url asks for SSL \(sslmode=require\) and this server offers none: turn ssl on in the server, or write sslmode=disable$/);
      const plain = createPgStore({ url: `${url}?sslmode=disable`, log, poolSize: 4 });
      await plain.start();
      await plain.stop();
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', warned);
    }
  });

  // The listener's connection (made in the background, listener.ts) is named apart.
  const countNamed = (url: string, name: string) => withClient(url, async (admin) => (await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, [name])).rows[0]!.n);

  it('opens store.poolSize connections at start, named apart from the one it listens on', async () => {
    const url = await testDatabase('pool_fill');
    const store = createPgStore({ url, log, poolSize: 5 });
    try {
      await store.start();
      expect(await countNamed(url, 'schoolbridge')).toBe(5);
      await expect.poll(() => countNamed(url, 'schoolbridge listener')).toBe(1);
    } finally {
      await store.stop();
    }
  });

  it("opens them all for a daemon's store only: a command's opens what it uses", async () => {
    const config = { driver: 'postgres' as const, dir: '', poolSize: 5 };
    const [daemonUrl, commandUrl] = [await testDatabase('pool_daemon'), await testDatabase('pool_command')];
    const daemon = openStore({ ...config, url: daemonUrl }, log);
    const command = openStore({ ...config, url: commandUrl }, log, { mode: 'oneshot' });
    try {
      await daemon.start();
      await command.start();
      expect(await countNamed(daemonUrl, 'schoolbridge')).toBe(5);
      expect(await countNamed(commandUrl, 'schoolbridge')).toBe(1);
      await command.state.put({ probe: 'x' });
      expect(await command.state.get('probe')).toBe('x');
    } finally {
      await command.stop();
      await daemon.stop();
    }
  });

  it('opens again, by itself, the connections that broke', async () => {
    const url = await testDatabase('pool_top_up');
    const warnings: string[] = [];
    const store = createPgStore({ url, log: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }), poolSize: 4, heartbeatMs: 50 });
    try {
      await store.start();
      expect(await countNamed(url, 'schoolbridge')).toBe(4);
      // As a server restart or a network cut does to idle connections.
      const ended = await withClient(url, async (admin) => (await admin.query<{ ended: boolean }>(
        `SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'schoolbridge' LIMIT 2`)).rows);
      expect(ended).toEqual([{ ended: true }, { ended: true }]);
      await expect.poll(() => countNamed(url, 'schoolbridge'), { timeout: 5000 }).toBe(4);
      // Both broke at once: one warning.
      expect(warnings.filter((line) => line.includes('a PostgreSQL connection broke'))).toHaveLength(1);
      await store.state.put({ probe: 'x' });
      expect(await store.state.get('probe')).toBe('x');
    } finally {
      await store.stop();
    }
  });

  it("keeps its idle connections open past pg-pool's idle timeout", async () => {
    const pool = createPool(await testDatabase('pool_idle'), 3);
    try {
      expect((await fillPool(pool, 3)).missing).toBe(0);
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      // pg-pool schedules an idle connection's closing when it is released.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        for (const client of clients) client.release();
        vi.advanceTimersByTime(10 * 60_000);
      } finally {
        vi.useRealTimers();
      }
      expect(pool.totalCount).toBe(3);
      expect(pool.idleCount).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('tells a role that may not create the schema how to fix it, and starts once it has a schema of its own', async () => {
    const { url, admin, role, database } = await roleDatabase('grants');
    const refused = createPgStore({ url, log });
    await expect(refused.start()).rejects.toMatchObject({
      code: 'store.failed',
      message: `cannot open the PostgreSQL store (store.url): 42501: permission denied for database ${database}; the role creates the schema schoolbridge and its tables at start: GRANT CREATE ON DATABASE "${database}" TO "${role}", or create the schema schoolbridge owned by that role`,
    });
    await withClient(admin, (client) => client.query(`CREATE SCHEMA schoolbridge AUTHORIZATION ${role}`));
    const store = createPgStore({ url, log });
    try {
      await store.start();
      await store.state.put({ probe: 'x' });
      expect(await store.state.get('probe')).toBe('x');
    } finally {
      await store.stop();
    }
  });

  it('tells a role that a schema of another role\'s is in its way', async () => {
    const { url, role } = await roleDatabase('owned', async (admin, name) => {
      await admin.query(`GRANT CREATE ON DATABASE ${admin.database} TO ${name}`);
      await admin.query('CREATE SCHEMA schoolbridge');
    });
    const refused = createPgStore({ url, log });
    await expect(refused.start()).rejects.toMatchObject({
      code: 'store.failed',
      message: expect.stringMatching(new RegExp(`^cannot open the PostgreSQL store \\(store\\.url\\): 3F000: .*; the schema schoolbridge exists but "${role}" may not create in it: ALTER SCHEMA schoolbridge OWNER TO "${role}", or drop it and let the role create it$`)) as unknown,
    });
  });

  it('starts with the connections the server grants when it refuses some, the listener first, and says so', async () => {
    const { url, admin, role } = await roleDatabase('pool_short', (client, name) => client.query(`GRANT ALL ON DATABASE ${client.database} TO ${name}`), 5);
    const warnings: string[] = [];
    const store = createPgStore({ url, log: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) }), poolSize: 5 });
    try {
      await store.start();
      // Five in all: the listener's and four of the pool's. Those it opens at once undercount them
      // (PostgreSQL counts a role's connections as each starts), so it opens them again one by one.
      expect(warnings.some((line) => /"missing":1,.*1 of the store's 5 connections \(store\.poolSize\) could not be opened at start \(a connection limit\): it runs on the 4 it got/.test(line)), warnings.join('')).toBe(true);
      expect(warnings.filter((line) => /cannot listen/.test(line))).toEqual([]);
      const listening = await withClient(admin, (client) => client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND application_name LIKE '% listener'`, [role]));
      expect(listening.rows[0]!.n).toBe(1);
      await store.state.put({ probe: 'x' });
      expect(await store.state.get('probe')).toBe('x');
      // More calls at once than it has connections wait for one rather than fail at the limit.
      await Promise.all(Array.from({ length: 12 }, (_, i) => store.state.put({ [`burst${i}`]: String(i) })));
      expect(await store.state.get('burst11')).toBe('11');
    } finally {
      await store.stop();
    }
  });

  it('refuses to start on fewer connections than a poll cycle holds, saying what to raise', async () => {
    const { url, admin, role } = await roleDatabase('pool_tiny', (client, name) => client.query(`GRANT ALL ON DATABASE ${client.database} TO ${name}`), 3);
    const store = createPgStore({ url, log, poolSize: 5 });
    await expect(store.start()).rejects.toMatchObject({
      code: 'store.failed',
      message: expect.stringMatching(/^the PostgreSQL store lets this process open only 2 of its 5 connections \(store\.poolSize; 53300: too many connections for role "[a-z_0-9]+"\): it needs 4 besides its listener, as a poll cycle holds one per stream; raise the role's CONNECTION LIMIT or the server's max_connections, or run fewer replicas$/) as unknown,
    });
    // Nothing of it stays connected.
    await expect.poll(() => withClient(admin, async (client) => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1', [role])).rows[0]!.n)).toBe(0);
  });
});
