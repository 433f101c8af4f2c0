import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_PARTS } from '../log-parts.js';
import { createSqliteStore } from './sqlite-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('sqlite store timings', () => {
  it('times every transaction of the database thread, reads too: a webhook commit waits behind each', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sb-timings-'));
    dirs.push(dir);
    const transactions: number[] = [];
    // No heartbeat during the case: the read below is the only call.
    const store = createSqliteStore({ dir, log: pino({ level: 'silent' }), heartbeatMs: 3_600_000, timings: { transaction: (s) => transactions.push(s), sync: () => {} } });
    await store.start();
    try {
      const before = transactions.length;
      await store.state.get('anything');
      expect(transactions.length).toBe(before + 1);
    } finally {
      await store.stop();
    }
  });

  it("counts the outbox one part of the delivery log per transaction: a webhook's commit waits behind one part's count", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sb-timings-'));
    dirs.push(dir);
    const transactions: number[] = [];
    const store = createSqliteStore({ dir, log: pino({ level: 'silent' }), heartbeatMs: 3_600_000, timings: { transaction: (s) => transactions.push(s), sync: () => {} } });
    await store.start();
    try {
      const before = transactions.length;
      await store.outbox.counts();
      // The delivery rows and ranges in one, each part of the log in one of its own.
      expect(transactions.length).toBe(before + 1 + LOG_PARTS);
    } finally {
      await store.stop();
    }
  });
});
