import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import { planNodes, type PlanNode } from '../../../test/support/pg-plan.js';
import { systemClock } from '../../clock.js';
import { record } from '../conformance/support.js';
import { createHealth } from '../health.js';
import { createPgCalls } from './calls.js';
import { createPool } from './db.js';
import { enqueue } from './enqueue.js';
import { claim, settle } from './outbox.js';
import { migrate } from './schema.js';
import { createOutboxStatistics } from './statistics.js';

const log = pino({ level: 'silent' });
const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

describe('createOutboxStatistics', () => {
  it('analyzes once per so many deliveries added, one at a time, and lets a failure pass', async () => {
    const queries: string[] = [];
    let finish: (() => void) | undefined;
    const pool = { query: (text: string) => new Promise<void>((resolve, reject) => {
      queries.push(text);
      finish = queries.length === 2 ? () => reject(new Error('down')) : resolve;
    }) };
    const statistics = createOutboxStatistics({ pool: () => pool as never, log, after: 100 });
    statistics.grew(60);
    expect(queries).toEqual([]);
    statistics.grew(40);
    expect(queries).toEqual(['ANALYZE outbox_delivery, outbox_record']);
    // While it runs, growth starts no second one; it counts towards the next.
    statistics.grew(99);
    expect(queries).toHaveLength(1);
    finish!();
    await statistics.idle();
    statistics.grew(1);
    expect(queries).toHaveLength(2);
    finish!();
    await statistics.idle();
    statistics.grew(99);
    expect(queries).toHaveLength(2);
  });
});

describe('the outbox statistics on postgres', () => {
  it('are renewed once many deliveries were added, so a claim planned on an empty outbox does not scan it whole', async () => {
    // One connection: the claims below and the plan looked at share its prepared statements.
    const pool = createPool(await testDatabase('stats'), 1);
    ends.push(() => pool.end());
    await migrate(pool);
    const statistics = createOutboxStatistics({ pool: () => pool, log, after: 1000 });
    const calls = createPgCalls({ pool: () => pool, isOpen: () => true, health: createHealth(), clock: systemClock, notify: () => {}, grew: statistics.grew });
    const now = Date.now();
    const request = { connector: 'a', limit: 500, now, leaseMs: 60_000 };
    let n = 0;
    const add = (count: number) => calls.write((db) => enqueue(db, Array.from({ length: count }, () => {
      n += 1;
      return record(`r${n}`, `k:${n}`, ['a'], JSON.stringify({ id: n, pad: 'x'.repeat(200) }));
    }), now));
    // A quiet outbox: each claim finds two deliveries, and the connection keeps a generic plan.
    for (let round = 0; round < 8; round++) {
      await add(2);
      const claimed = await calls.lease((db) => claim(db, 'me', request));
      await calls.lease((db) => settle(db, 'me', claimed.map((c) => ({ id: c.delivery.id, fence: c.delivery.fence!, connector: 'a', status: 'done' as const, at: now }))));
    }
    for (let i = 0; i < 5; i++) await add(1000);
    await statistics.idle();

    const client = await pool.connect();
    try {
      const { rows: [statement] } = await client.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE statement LIKE 'UPDATE outbox_delivery SET attempts%'`);
      expect(statement).toBeDefined();
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (FORMAT JSON) EXECUTE ${statement!.name}('a', ${now}, 500, 'me', ${now + 60_000})`);
      const scans = planNodes(rows[0]!['QUERY PLAN'][0]!.Plan).filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name']);
      expect(scans).toEqual([]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
