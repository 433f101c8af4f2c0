import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { TallyEntry } from '../store/index.js';
import { createHourlyCounts } from './hourly-counts.js';

const HOUR = 3_600_000;
const log = pino({ level: 'silent' });

describe('hourly counts', () => {
  it('adds counts per hour and label in memory and hands them to the store in one call per flush', async () => {
    let now = 5 * HOUR + 10;
    const calls: TallyEntry[][] = [];
    const counts = createHourlyCounts({ kind: 'webhook', store: { count: async (e) => void calls.push([...e]) }, clock: { now: () => now } as never, log });
    counts.add('stored');
    counts.add('stored');
    counts.add('rejected:stale');
    now += HOUR;
    counts.add('stored', 3);
    await counts.flush();
    expect(calls).toEqual([[
      { hour: 5 * HOUR, kind: 'webhook', label: 'stored', n: 2 },
      { hour: 5 * HOUR, kind: 'webhook', label: 'rejected:stale', n: 1 },
      { hour: 6 * HOUR, kind: 'webhook', label: 'stored', n: 3 },
    ]]);
    await counts.flush();
    expect(calls).toHaveLength(1);
  });

  it('keeps what a failed flush could not store for the next one', async () => {
    let fail = true;
    const stored: TallyEntry[] = [];
    const store = { count: async (e: readonly TallyEntry[]) => { if (fail) throw new Error('down'); stored.push(...e); } };
    const counts = createHourlyCounts({ kind: 'webhook', store, clock: { now: () => HOUR } as never, log });
    counts.add('stored');
    await counts.flush();
    counts.add('stored');
    fail = false;
    await counts.flush();
    expect(stored).toEqual([{ hour: HOUR, kind: 'webhook', label: 'stored', n: 2 }]);
  });
});
