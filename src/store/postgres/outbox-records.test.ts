import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import type { Store } from '../port.js';
import { createPgStore } from './pg-store.js';

/**
 * A record's text on PostgreSQL is kept once: a queued record's in `outbox_record`, with the number of
 * its deliveries not done yet, going with its last delivery; a webhook's in the delivery log, going
 * once every connector's cursor has passed it. Neither holds every record ever delivered.
 */
const log = pino({ level: 'silent' });
const opened: { store: Store; client: pg.Client }[] = [];
afterEach(async () => {
  for (const { store, client } of opened.splice(0)) {
    await client.end();
    await store.stop();
  }
});

async function open() {
  const url = await testDatabase('texts');
  const store = createPgStore({ url, log });
  await store.start();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET search_path TO schoolbridge');
  opened.push({ store, client });
  return { store, client, url };
}

const now = () => Date.now();
const doneAll = async (store: Store, connector: string) => {
  const claimed = await store.outbox.claim({ connector, limit: 10, now: now(), leaseMs: 60_000 });
  await store.outbox.settle(claimed.map((c) => ({ id: c.delivery.id, fence: c.delivery.fence, status: 'done' as const, at: now(), connector })));
  return claimed;
};
const records = async (client: pg.Client) => (await client.query('SELECT id, pending FROM outbox_record ORDER BY id')).rows;

describe('postgres outbox: a record\'s text', () => {
  it('stays while a delivery of it is left, and goes with the last one', async () => {
    const { store, client } = await open();
    const json = '{"id":"events:e1","stream":"events"}';
    await store.outbox.enqueue([{ id: 'events:e1', stream: 'events', orderKey: 'events:1', json, connectors: ['files', 'other'] }]);
    expect(await records(client)).toEqual([{ id: 'events:e1', pending: 2 }]);
    expect((await doneAll(store, 'files')).map((c) => c.json)).toEqual([json]);
    expect(await records(client)).toEqual([{ id: 'events:e1', pending: 1 }]);
    expect((await doneAll(store, 'other')).map((c) => c.json)).toEqual([json]);
    expect(await records(client)).toEqual([]);
  });

  it('goes when its two connectors settle their deliveries of it at the same moment', async () => {
    const { store, client, url } = await open();
    await store.outbox.enqueue([{ id: 'events:e3', stream: 'events', orderKey: 'events:3', json: '{"id":"events:e3"}', connectors: ['files', 'other'] }]);
    const [files] = await store.outbox.claim({ connector: 'files', limit: 10, now: now(), leaseMs: 60_000 });
    const [other] = await store.outbox.claim({ connector: 'other', limit: 10, now: now(), leaseMs: 60_000 });
    // The settlement of `files` as another replica runs it: the record lowered to 1, not committed yet.
    await client.query('BEGIN');
    await client.query(`UPDATE outbox_record SET pending = pending - 1 WHERE id = 'events:e3'`);
    const settled = store.outbox.settle([{ id: other!.delivery.id, fence: other!.delivery.fence, status: 'done', at: now(), connector: 'other' }]);
    // It commits once the settlement of `other` waits for its row, having seen 2.
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    try {
      while ((await watcher.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%outbox_record%'`)).rowCount === 0) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      await watcher.end();
    }
    await client.query('COMMIT');
    expect(await settled).toEqual([other!.delivery.id]);
    await client.query(`DELETE FROM outbox_delivery WHERE id = $1`, [files!.delivery.id]);
    expect(await records(client)).toEqual([]);
  });

  it('keeps a webhook\'s record once in the delivery log, until every connector has passed it', async () => {
    const { store, client } = await open();
    const json = '{"id":"events:e2","stream":"events"}';
    await store.inbox.accept({ id: 'e2', event: 'invoice.created', receivedAt: new Date().toISOString(), receivedAtMs: now(), body: '{}', recordIds: ['events:e2'], reprocessed: 0 },
      [{ id: 'events:e2', stream: 'events', orderKey: 'events:2', json, connectors: ['files', 'other'] }]);
    const logged = async () => (await client.query('SELECT record_id FROM outbox_log')).rows;
    expect(await records(client)).toEqual([]);
    expect(await logged()).toEqual([{ record_id: 'events:e2' }]);
    expect((await doneAll(store, 'files')).map((c) => c.json)).toEqual([json]);
    await store.outbox.sweep(now());
    expect(await logged()).toHaveLength(1);
    expect((await doneAll(store, 'other')).map((c) => c.json)).toEqual([json]);
    await store.outbox.sweep(now());
    expect(await logged()).toEqual([]);
    expect(await store.outbox.list()).toEqual([]);
  });
});
