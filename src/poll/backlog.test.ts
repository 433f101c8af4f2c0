import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freshRows } from '../store/conformance.js';
import { ENGINES, testStore, type TestStore } from '../../test/support/stores.js';
import type { Store } from '../store/index.js';
import { createBacklog } from './backlog.js';
import { systemClock } from '../clock.js';

const log = pino({ level: 'silent' });
const made: TestStore[] = [];
afterEach(async () => {
  for (const m of made.splice(0)) await m.cleanup();
});

/** A fresh users snapshot of `n` rows that owes one created change per row to connector `a`. */
async function owing(store: Store, n: number): Promise<void> {
  await store.snapshot.begin('users', 'fresh');
  await store.snapshot.stageFresh('users', freshRows(Array.from({ length: n }, (_, i) => ({ key: i + 1, chain: `c${String(i + 1).padStart(11, '0')}`, json: `{"id":${i + 1}}` }))));
  await store.snapshot.applyFresh('users', { state: {}, created: { detectedAt: 'T0', connectors: ['a'] } });
}

describe.each(ENGINES)('backlog on %s', (engine) => {
  it('enqueues what a fresh snapshot owes in key order, chunk by chunk, and counts what is left', async () => {
    const m = await testStore(engine);
    made.push(m);
    await owing(m.store, 7);
    let notified = 0;
    const backlog = createBacklog({ snapshot: m.store.snapshot, outbox: { notify: () => void (notified += 1) }, clock: systemClock, log, chunkSize: 3 });
    await backlog.finish('users');
    expect(backlog.remaining('users')).toBe(0);
    expect(notified).toBe(3);
    expect((await m.store.outbox.list()).map((d) => d.recordId)).toEqual([1, 2, 3, 4, 5, 6, 7].map((k) => `users:${k}:c${String(k).padStart(11, '0')}`));
    await backlog.stop();
  });

  it('resumes after a stop where the last committed chunk left off, enqueueing nothing twice', async () => {
    const m = await testStore(engine);
    made.push(m);
    await owing(m.store, 10);
    // A backlog stopped after two chunks of three (as a daemon stopped half-way would leave it).
    expect(await m.store.snapshot.enqueueCreated('users', 3, Date.now())).toBe(7);
    expect(await m.store.snapshot.enqueueCreated('users', 3, Date.now())).toBe(4);
    const resumed = createBacklog({ snapshot: m.store.snapshot, outbox: { notify: () => {} }, clock: systemClock, log, chunkSize: 3 });
    resumed.start();
    await resumed.finish();
    expect(await m.store.snapshot.createdOwed('users')).toBe(0);
    const ids = (await m.store.outbox.list()).map((d) => d.recordId);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);
    await resumed.stop();
  });

  it('a stopped backlog refuses to finish, saying the rest resumes at the next start', async () => {
    const m = await testStore(engine);
    made.push(m);
    await owing(m.store, 4);
    const backlog = createBacklog({ snapshot: m.store.snapshot, outbox: { notify: () => {} }, clock: systemClock, log, chunkSize: 1 });
    await backlog.stop();
    await expect(backlog.finish('users')).rejects.toMatchObject({ code: 'poll.stopped' });
    expect(await m.store.snapshot.createdOwed('users')).toBe(4);
  });
});
