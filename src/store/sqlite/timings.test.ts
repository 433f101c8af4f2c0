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

/** How many transactions of the database thread `read` takes, on a store with no heartbeat meanwhile. */
async function transactionsOf(read: (store: ReturnType<typeof createSqliteStore>) => Promise<unknown>): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sb-timings-'));
  dirs.push(dir);
  const transactions: number[] = [];
  const store = createSqliteStore({ dir, log: pino({ level: 'silent' }), heartbeatMs: 3_600_000, timings: { transaction: (s) => transactions.push(s), sync: () => {} } });
  await store.start();
  try {
    const before = transactions.length;
    await read(store);
    return transactions.length - before;
  } finally {
    await store.stop();
  }
}

describe('sqlite store timings', () => {
  it('times every transaction of the database thread, reads too: a webhook commit waits behind each', async () => {
    expect(await transactionsOf((store) => store.state.get('anything'))).toBe(1);
  });

  it("gives a connector's claim and settlement a transaction each, apart from the calls beside them: a webhook's commit does not share a batch's", async () => {
    const claim = { connector: 'files', limit: 500, now: Date.now(), leaseMs: 60_000 };
    // Made in one turn, so sent in one message: the read in one transaction, then each batch call in its own.
    expect(await transactionsOf((store) => Promise.all([store.state.get('anything'), store.outbox.claim(claim), store.outbox.settle([]), store.state.get('else')]))).toBe(3);
  });

  it("counts the outbox one part of the delivery log per transaction: a webhook's commit waits behind one part's count", async () => {
    // The delivery rows and ranges in one, each part of the log in one of its own.
    expect(await transactionsOf((store) => store.outbox.counts())).toBe(1 + LOG_PARTS);
  });
});
