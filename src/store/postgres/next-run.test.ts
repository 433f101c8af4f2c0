import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import { planNodes, type PlanNode } from '../../../test/support/pg-plan.js';
import { record } from '../conformance/support.js';
import { createPool, type Db } from './db.js';
import { enqueue } from './enqueue.js';
import { claim, nextRunAt } from './outbox.js';
import { migrate } from './schema.js';

const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

describe('nextRunAt on postgres', () => {
  it('reads the deliveries in flight ahead of the first one due, not the whole queue', async () => {
    const pool = createPool(await testDatabase('next'), 2);
    ends.push(() => pool.end());
    await migrate(pool);
    const sent: { text: string; values: unknown[] }[] = [];
    const db = {
      query: (text: string, values: unknown[]) => {
        sent.push({ text, values });
        return pool.query(text, values);
      },
      tell() {},
      grew() {},
    } as unknown as Db;
    const now = Date.now();
    await enqueue(db, Array.from({ length: 2000 }, (_, i) => record(`r${i}`, `k:${i}`)), now);
    await pool.query('ANALYZE outbox_delivery');
    expect(await claim(db, 'me', { connector: 'a', limit: 40, now, leaseMs: 60_000 })).toHaveLength(40);

    sent.length = 0;
    expect(await nextRunAt(db, 'a')).toBe(now);
    let read = 0;
    for (const { text, values } of sent) {
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      for (const node of planNodes(rows[0]!['QUERY PLAN'][0]!.Plan)) {
        if (node['Relation Name'] === 'outbox_delivery') read += (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
      }
    }
    // The 40 in flight and the first after them, with the rest of the page that one is on (16 + 64 rows).
    expect(read).toBeGreaterThan(40);
    expect(read).toBeLessThan(120);
  });
});
