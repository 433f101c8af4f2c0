import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import { event, record } from '../conformance/support.js';
import type { Store } from '../port.js';
import { createPool, type Db } from './db.js';
import { append } from './log.js';
import { createPgStore } from './pg-store.js';

const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

describe('the delivery log on postgres', () => {
  it('numbers records in commit order: an append waits for one begun before it to commit', async () => {
    const url = await testDatabase('log');
    const store: Store = createPgStore({ url, log: pino({ level: 'silent' }) });
    await store.start();
    ends.push(() => store.stop());
    const pool = createPool(url, 2);
    ends.push(() => pool.end());
    const client = await pool.connect();
    ends.push(async () => client.release());
    const db = { query: (text: string, values: unknown[]) => client.query(text, values), tell() {}, grew() {} } as unknown as Db;
    const claim = () => store.outbox.claim({ connector: 'a', limit: 10, now: Date.now() + 1000, leaseMs: 60_000 });

    await client.query('BEGIN');
    await append(db, [record('events:early', 'events:x1')], Date.now());
    let accepted = false;
    const late = store.inbox.accept({ ...event('late'), receivedAtMs: Date.now() }, [record('events:late', 'events:x2')]).then(() => (accepted = true));
    // The later append is numbered only once the earlier one has committed: it waits for its lock.
    for (;;) {
      expect(accepted).toBe(false);
      const { rows } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%outbox_log_head%'`);
      if (rows.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await claim()).toEqual([]);
    await client.query('COMMIT');
    await late;
    const claimed = await claim();
    expect(claimed.map((c) => c.delivery.recordId)).toEqual(['events:early', 'events:late']);
    expect(claimed[0]!.delivery.seq).toBeLessThan(claimed[1]!.delivery.seq);
  });
});
