import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './handles.js';
import { leasesOf } from './leases.js';
import { operations } from './operations.js';
import { migrate } from './schema.js';

/**
 * Where the SQLite outbox keeps a record's text: in each of its deliveries, and in `outbox_record`
 * only for what has none of its own yet. A database written before deliveries held their text keeps
 * its queue: those deliveries are claimed with their record's text and take the record with them.
 */
describe('sqlite outbox: where a record\'s text lives', () => {
  let dir: string;
  let db: Database.Database;
  const ops = operations({ id: 'me', host: 'h', pid: 1, startedAt: 0 });
  const now = 1_000_000;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sb-outbox-records-'));
    db = openDatabase(path.join(dir, 'test.db'));
    migrate(db);
  });
  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  const inTransaction = <T>(fn: () => T): T => {
    leasesOf(db).begin();
    const value = db.transaction(fn)();
    leasesOf(db).commit();
    return value;
  };
  const claim = () => inTransaction(() => ops.claim(db, { connector: 'files', limit: 10, now, leaseMs: 60_000 }));
  const settleDone = (claimed: ReturnType<typeof claim>) =>
    inTransaction(() => ops.settle(db, claimed.map((c) => ({ id: c.delivery.id, fence: c.delivery.fence, status: 'done' as const, at: now, connector: 'files' }))));

  it('keeps the text in the delivery rows, one per connector, and no record row', () => {
    const json = '{"id":"events:e1","stream":"events"}';
    inTransaction(() => ops.enqueue(db, [{ id: 'events:e1', stream: 'events', orderKey: 'events:1', json, connectors: ['files', 'other'] }], now, {}));
    expect(db.prepare('SELECT connector, body FROM outbox_delivery ORDER BY connector').all()).toEqual([
      { connector: 'files', body: json }, { connector: 'other', body: json },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM outbox_record').get()).toEqual({ n: 0 });
    const claimed = claim();
    expect(claimed.map((c) => c.json)).toEqual([json]);
    expect(settleDone(claimed)).toEqual(['files:events:e1']);
    expect(db.prepare('SELECT connector FROM outbox_delivery').all()).toEqual([{ connector: 'other' }]);
  });

  it('refuses a record without text', () => {
    const broken = { id: 'events:e2', stream: 'events' as const, orderKey: 'events:2', json: null as unknown as string, connectors: ['files'] };
    expect(() => inTransaction(() => ops.enqueue(db, [broken], now, {}))).toThrow(/no text/);
    expect(db.prepare('SELECT count(*) AS n FROM outbox_delivery').get()).toEqual({ n: 0 });
  });

  it('delivers what an older version queued with its text in outbox_record, and removes the record with its last delivery', () => {
    // As the schema before deliveries held their text wrote a record for two connectors.
    const json = '{"id":"events:old","stream":"events"}';
    db.prepare(`INSERT INTO outbox_record (id, body, pending) VALUES ('events:old', ?, 2)`).run(json);
    const insert = db.prepare(`INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at)
      VALUES (?, ?, 'events:old', 'events', 'events:9', 'pending', ?, ?)`);
    insert.run('files:events:old', 'files', now, now);
    insert.run('other:events:old', 'other', now, now);
    const claimed = claim();
    expect(claimed.map((c) => [c.delivery.id, c.json])).toEqual([['files:events:old', json]]);
    settleDone(claimed);
    expect(db.prepare('SELECT pending FROM outbox_record').all()).toEqual([{ pending: 1 }]);
    const other = inTransaction(() => ops.claim(db, { connector: 'other', limit: 10, now, leaseMs: 60_000 }));
    expect(other.map((c) => c.json)).toEqual([json]);
    inTransaction(() => ops.settle(db, other.map((c) => ({ id: c.delivery.id, fence: c.delivery.fence, status: 'done' as const, at: now, connector: 'other' }))));
    expect(db.prepare('SELECT count(*) AS n FROM outbox_record').get()).toEqual({ n: 0 });
  });
});
