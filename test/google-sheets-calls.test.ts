/**
 * Counted API calls: a batch of N changed rows costs at most one read plus
 * three writes per tab, and a roster export of R rows at most ceil(cells / chunkCells) + 3 calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver } from './fake-sheets/deliver.js';
import { startFakeSheets, type FakeSheets } from './fake-sheets/index.js';
import { change, roster, sheetsContext, student } from './fake-sheets/context.js';
import { ROSTER_COLUMNS } from '../src/records.js';

const ID = 'counted';
let fake: FakeSheets;
let close: () => Promise<void>;
let ctx: ReturnType<typeof sheetsContext>['ctx'];

beforeAll(async () => {
  fake = await startFakeSheets({ tokens: ['t'] });
  fake.createSpreadsheet(ID);
  // writesPerMinute is raised so the test measures calls, not the limiter's waiting.
  ({ ctx, close } = sheetsContext({ spreadsheetId: ID, accessToken: 't', rootUrl: fake.rootUrl, writesPerMinute: 300, readsPerMinute: 300, batchSize: 5000 }));
});
afterAll(async () => {
  await close();
  await fake.close();
});

const report = (what: string, reads: number, writes: number) => console.log(`[google-sheets calls] ${what}: ${reads} read(s), ${writes} write(s)`);

describe('google-sheets call budget', () => {
  it('a cold first batch creates the tab: 1 metadata read + addSheet + header/rows', async () => {
    fake.resetCalls();
    const seed = Array.from({ length: 6000 }, (_, i) => change(i + 1, 'created', student(i + 1)));
    const outcomes = await deliver(ctx, seed);
    expect(outcomes.every((o) => o.status === 'done')).toBe(true);
    report('cold batch of 6000 new rows', fake.reads(), fake.writes());
    expect(fake.reads()).toBe(1);
    expect(fake.writes()).toBeLessThanOrEqual(3);
  });

  it.each([1, 100, 5000])('a warm batch of %i changed rows costs at most 1 read + 3 writes', async (n) => {
    fake.resetCalls();
    const base = n * 7;
    const batch = Array.from({ length: n }, (_, i) => {
      const kind = i % 3;
      const key = ((base + i) % 6000) + 1;
      if (kind === 0) return change(key, 'updated', student(key, `N${n}-${i}`));
      if (kind === 1) return change(100_000 + base + i, 'created', student(100_000 + base + i));
      return change(key, 'deleted', null);
    });
    const outcomes = await deliver(ctx, batch);
    expect(outcomes.every((o) => o.status === 'done')).toBe(true);
    report(`warm batch of ${n} changes`, fake.reads(), fake.writes());
    expect(fake.reads()).toBeLessThanOrEqual(1);
    expect(fake.writes()).toBeLessThanOrEqual(3);
    fake.resetCalls();
    await deliver(ctx, batch);
    report(`re-applied batch of ${n}`, fake.reads(), fake.writes());
    expect(fake.writes()).toBe(0);
  });

  it('a 100,000-row roster export costs at most ceil(cells / chunkCells) + 3 calls', async () => {
    fake.resetCalls();
    const rows = 100_000;
    const [out] = await deliver(ctx, [roster(rows)]);
    expect(out).toEqual({ status: 'done' });
    const cells = (rows + 1) * ROSTER_COLUMNS.length;
    const bound = Math.ceil(cells / ctx.config.chunkCells) + 3;
    report(`roster of ${rows} rows (${cells} cells, chunk ${ctx.config.chunkCells}, bound ${bound})`, fake.reads(), fake.writes());
    expect(fake.reads() + fake.writes()).toBeLessThanOrEqual(bound);
    expect(fake.values(ID, 'Roster')).toHaveLength(rows + 1);
  });
});
