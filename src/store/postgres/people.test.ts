import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { testDatabase, withClient } from '../../../test/support/pg-database.js';
import { planNodes, type PlanNode } from '../../../test/support/pg-plan.js';
import { freshRows } from '../conformance/support.js';
import { MARKED, STALE } from './people.js';
import { createPgStore } from './pg-store.js';

const log = pino({ level: 'silent' });
const STUDENTS = 5000;
const STRETCH = 100;

const student = (key: number) => ({
  key, chain: `c${String(key).padStart(11, '0')}`,
  json: JSON.stringify({ id: key, user: { id: 1000 + key, firstName: `Anna${key}`, lastName: 'Nowak', login: `u${key}`, additionalData: { email: `s${key}@example.com` } } }),
});

describe('the name index on postgres', () => {
  it('reads a stretch of the snapshot, or the marked people, against those people only, and each body as JSON once', async () => {
    const url = await testDatabase('people');
    const store = createPgStore({ url, log });
    await store.start();
    try {
      await withClient(url, async (client) => {
        // As right after a first cycle: `person` filled and never analyzed.
        await client.query('ALTER TABLE person SET (autovacuum_enabled = false)');
        await store.snapshot.begin('students', 'fresh');
        await store.snapshot.stageFresh('students', freshRows(Array.from({ length: STUDENTS }, (_, i) => student(i + 1))));
        await store.snapshot.applyFresh('students', { state: {} });
        while (await store.people.refresh('students', 1000));
        expect((await client.query('SELECT count(*)::int AS n FROM person')).rows[0].n).toBe(STUDENTS);
        // One stretch gone stale, so that the query makes persons of it.
        await client.query(`UPDATE person SET chain = 'old' WHERE key > 2000 AND key <= 2010`);

        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${STALE('students')}`, [2000, 2000 + STRETCH, 'students']);
        const plan = planNodes(rows[0]!['QUERY PLAN'][0]!.Plan);
        const stale = plan[0]!['Actual Rows'];
        expect(stale).toBe(10);
        const peopleRead = plan.filter((n) => n['Relation Name'] === 'person').reduce((sum, n) => sum + n['Actual Rows']! * n['Actual Loops']!, 0);
        expect(peopleRead).toBeLessThanOrEqual(STRETCH);
        const outputs = plan.flatMap((n) => n.Output ?? []);
        expect(outputs.some((o) => o.includes('#>>'))).toBe(true);
        expect(outputs.filter((o) => /::jsonb #>>/.test(o))).toEqual([]);

        // The people a cycle marked: looked up by their keys on both sides.
        const marked = Array.from({ length: STRETCH }, (_, i) => 1950 + i);
        const markedPlan = planNodes((await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) ${MARKED('students')}`, [marked, 'students'])).rows[0]!['QUERY PLAN'][0]!.Plan);
        expect(markedPlan[0]!['Actual Rows']).toBe(10);
        const markedRead = markedPlan.filter((n) => n['Relation Name'] === 'person').reduce((sum, n) => sum + n['Actual Rows']! * n['Actual Loops']!, 0);
        expect(markedRead).toBeLessThanOrEqual(STRETCH);
        expect(markedPlan.flatMap((n) => n.Output ?? []).filter((o) => /::jsonb #>>/.test(o))).toEqual([]);
      }, { options: '-c search_path=schoolbridge' });
    } finally {
      await store.stop();
    }
  });
});
