import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { testDatabase } from '../../../test/support/pg-database.js';
import { systemClock } from '../../clock.js';
import { createHealth } from '../health.js';
import type { StoreChange } from '../port.js';
import { createPgCalls } from './calls.js';
import { CHANNEL } from './listener.js';
import { createNotifier, SPACING_MS } from './notifier.js';

const log = pino({ level: 'silent' });
const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

async function pool(max = 2): Promise<pg.Pool> {
  const created = new pg.Pool({ connectionString: await testDatabase('notice'), max });
  ends.push(() => created.end());
  return created;
}

/** A connection that LISTENs on the store's channel and keeps what it hears. */
async function listen(on: pg.Pool): Promise<string[]> {
  const client = await on.connect();
  ends.push(async () => client.release());
  const heard: string[] = [];
  client.on('notification', (message) => heard.push(message.payload ?? ''));
  await client.query(`LISTEN ${CHANNEL}`);
  return heard;
}

describe('notices to the other replicas', () => {
  it('are told only for a call that committed, and only after its commit', async () => {
    const db = await pool(3);
    await db.query('CREATE TABLE t (n int)');
    const seenAtNotice: Promise<number>[] = [];
    const calls = createPgCalls({
      pool: () => db, isOpen: () => true, health: createHealth(), clock: systemClock,
      // What another connection sees when the notice is asked for.
      notify: () => void seenAtNotice.push(db.query<{ n: number }>('SELECT count(*)::int AS n FROM t').then((r) => r.rows[0]!.n)),
      grew: () => {},
    });
    await expect(calls.write(async (tx) => {
      await tx.query('INSERT INTO t VALUES (1)');
      tx.tell('outbox');
      throw new Error('the call fails after its change');
    })).rejects.toThrow();
    expect(seenAtNotice).toHaveLength(0);
    await calls.write(async (tx) => {
      await tx.query('INSERT INTO t VALUES (2)');
      tx.tell('outbox');
      tx.tell('outbox');
    });
    expect(seenAtNotice).toHaveLength(1);
    expect(await seenAtNotice[0]).toBe(1);
  });

  it('reach a listener, those asked for while one is sent going together', async () => {
    const db = await pool(2);
    const heard = await listen(db);
    const notifier = createNotifier({ pool: () => db, log, clock: systemClock });
    for (let i = 0; i < 50; i++) notifier.tell(i % 2 === 0 ? 'outbox' : 'roles');
    await notifier.flush();
    await expect.poll(() => [...new Set(heard)].sort()).toEqual(['outbox', 'roles']);
    // The first notice went at once; the other 49 asked for meanwhile went in one more.
    expect(heard.length).toBeLessThanOrEqual(4);
  });

  it('go at most every SPACING_MS, unless flushed (a store that stops)', async () => {
    const db = await pool(2);
    const heard = await listen(db);
    const clock = testClock(undefined, { sleep: 'timers' });
    const notifier = createNotifier({ pool: () => db, log, clock });
    notifier.tell('outbox');
    await expect.poll(() => heard).toEqual(['outbox']);
    notifier.tell('roles');
    // Held until the spacing has passed.
    await expect.poll(() => clock.slept).toEqual([SPACING_MS]);
    expect(heard).toEqual(['outbox']);
    clock.advance(SPACING_MS);
    await expect.poll(() => heard).toEqual(['outbox', 'roles']);
    notifier.tell('outbox');
    await notifier.flush();
    await expect.poll(() => heard).toEqual(['outbox', 'roles', 'outbox']);
  });

  it('leave the connection they used as they found it (synchronous_commit)', async () => {
    const db = await pool(1);
    const notifier = createNotifier({ pool: () => db, log, clock: systemClock });
    notifier.tell('outbox');
    await notifier.flush();
    // One connection in the pool: the one the notice used.
    const { rows } = await db.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(rows[0]!.synchronous_commit).toBe('on');
  });

  it('give up quietly when the database cannot be reached; later ones still go', async () => {
    const db = await pool(2);
    const heard = await listen(db);
    let broken = true;
    const unreachable = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 500 });
    ends.push(() => unreachable.end());
    const notifier = createNotifier({ pool: () => (broken ? unreachable : db), log, clock: systemClock });
    notifier.tell('roles' satisfies StoreChange);
    await notifier.flush();
    broken = false;
    notifier.tell('outbox');
    await notifier.flush();
    await expect.poll(() => heard).toEqual(['outbox']);
  });
});
