import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../store/index.js';
import { INBOX, type InboxEntry } from './collections.js';
import { createInboxPruner, expiredInboxKeys } from './prune.js';
import { manualClock, TEST_NOW_MS } from './testing.js';

const HOUR = 3_600_000;
const entry = (id: string, receivedAtMs: unknown): [string, InboxEntry] => [id, { id, receivedAtMs } as InboxEntry];

describe('expiredInboxKeys', () => {
  it.each([
    ['older than the retention', TEST_NOW_MS - 97 * HOUR, true],
    ['exactly at the cutoff', TEST_NOW_MS - 96 * HOUR, false],
    ['recent', TEST_NOW_MS - HOUR, false],
    ['in the future', TEST_NOW_MS + HOUR, false],
    ['unreadable time', 'yesterday', false],
    ['no time', undefined, false],
  ])('%s', (_name, at, expired) => {
    expect(expiredInboxKeys([entry('k', at)], TEST_NOW_MS, 96 * HOUR)).toEqual(expired ? ['k'] : []);
  });
});

describe('inbox pruner', () => {
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.stop();
  });

  it('deletes expired entries in one commit at start, keeps the rest, and stops cleanly twice', async () => {
    const store = createStore({ log: pino({ level: 'silent' }) });
    await store.start();
    stores.push(store);
    await store.commit([
      { op: 'put', c: INBOX, k: 'old', v: { id: 'old', receivedAtMs: TEST_NOW_MS - 200 * HOUR } },
      { op: 'put', c: INBOX, k: 'new', v: { id: 'new', receivedAtMs: TEST_NOW_MS - HOUR } },
    ]);
    const clock = manualClock();
    const pruner = createInboxPruner({ store, clock, log: pino({ level: 'silent' }), retentionHours: 120 });
    const before = store.stats().seq;
    await pruner.start();
    expect(await pruner.prune()).toBe(0);
    expect([...store.entries(INBOX)].map(([k]) => k)).toEqual(['new']);
    expect(store.stats().seq).toBe(before + 1);
    clock.advance(120 * HOUR);
    expect(await pruner.prune()).toBe(1);
    await pruner.stop();
    await pruner.stop();
  });
});
