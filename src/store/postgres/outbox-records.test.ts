import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import type { Store } from '../port.js';
import { createPgStore } from './pg-store.js';

/**
 * Where the PostgreSQL outbox keeps a record's text (sqlite/outbox-records.test.ts says what for): in
 * each of its deliveries, and in `outbox_record` only for what has none of its own. Deliveries queued
 * by a version that kept every text in `outbox_record` are delivered with it, and take it with them.
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
  return { store, client };
}

const now = () => Date.now();
const doneAll = async (store: Store, connector: string) => {
  const claimed = await store.outbox.claim({ connector, limit: 10, now: now(), leaseMs: 60_000 });
  await store.outbox.settle(claimed.map((c) => ({ id: c.delivery.id, fence: c.delivery.fence, status: 'done' as const, at: now(), connector })));
  return claimed;
};

describe('postgres outbox: where a record\'s text lives', () => {
  it('keeps the text in the delivery rows, one per connector, and no record row', async () => {
    const { store, client } = await open();
    const json = '{"id":"events:e1","stream":"events"}';
    await store.outbox.enqueue([{ id: 'events:e1', stream: 'events', orderKey: 'events:1', json, connectors: ['files', 'other'] }]);
    expect((await client.query('SELECT connector, body FROM outbox_delivery ORDER BY connector')).rows).toEqual([
      { connector: 'files', body: json }, { connector: 'other', body: json },
    ]);
    expect((await client.query('SELECT count(*)::int AS n FROM outbox_record')).rows).toEqual([{ n: 0 }]);
    expect((await doneAll(store, 'files')).map((c) => c.json)).toEqual([json]);
    expect((await client.query('SELECT connector FROM outbox_delivery')).rows).toEqual([{ connector: 'other' }]);
  });

  it('delivers what an older version queued with its text in outbox_record, and removes the record with its last delivery', async () => {
    const { store, client } = await open();
    const json = '{"id":"events:old","stream":"events"}';
    await client.query(`INSERT INTO outbox_record (id, body, pending) VALUES ('events:old', $1, 2)`, [json]);
    for (const connector of ['files', 'other']) {
      await client.query(`INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at)
        VALUES ($1, $2, 'events:old', 'events', 'events:9', 'pending', $3, $3)`, [`${connector}:events:old`, connector, now() - 1000]);
    }
    expect((await doneAll(store, 'files')).map((c) => [c.delivery.id, c.json])).toEqual([['files:events:old', json]]);
    expect((await client.query('SELECT pending FROM outbox_record')).rows).toEqual([{ pending: 1 }]);
    expect((await doneAll(store, 'other')).map((c) => c.json)).toEqual([json]);
    expect((await client.query('SELECT count(*)::int AS n FROM outbox_record')).rows).toEqual([{ n: 0 }]);
  });
});
