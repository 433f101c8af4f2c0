import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../src/clock.js';
import { configSchema } from '../src/config/index.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createPollPart, type PollPart } from '../src/poll/index.js';
import { LAST_CYCLE_KEY } from '../src/poll/poller.js';
import { createReadiness, type Readiness } from '../src/readiness.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import type { Store } from '../src/store/index.js';
import { memoryLists, recordingOutbox, testStudent, testUser, type MemoryLists } from './support/poll.js';
import { testDatabase } from './support/pg-database.js';

const log = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A replica's poll part on its own store of the shared database, with its own readiness. */
async function replica(url: string, lists: MemoryLists, clock: Clock): Promise<{ store: Store; part: PollPart; readiness: Readiness }> {
  const store = createPgStore({ url, log, poolSize: 4 });
  await store.start();
  cleanups.push(() => store.stop());
  const readiness = createReadiness();
  const config = configSchema.parse({ upstream: { baseUrl: 'sandbox', clientId: 'c', clientSecret: 's' } });
  const part = createPollPart({
    config, mode: 'oneshot', store, upstream: lists, outbox: recordingOutbox(store), clock, log, metrics: createMetricsRegistry(), readiness,
  });
  await part.poller.start();
  cleanups.push(() => part.poller.stop());
  return { store, part, readiness };
}

describe('poll readiness across replicas on PostgreSQL', () => {
  it("is ended by another replica's later cycle that succeeded, looked up as readiness is asked", async () => {
    const url = await testDatabase('poll_ready');
    let now = Date.now();
    const clock: Clock = { ...systemClock, now: () => now };
    const people = () => memoryLists(Array.from({ length: 10 }, (_, i) => testStudent(i + 1)), Array.from({ length: 10 }, (_, i) => testUser(i + 1)));
    const [one, two] = [await replica(url, people(), clock), await replica(url, people(), clock)];
    expect((await one.part.poller.runCycle()).outcome).toBe('ok');
    // This replica's next cycle aborts on an empty list (a fault upstream that is over by the next).
    const empty = memoryLists([], Array.from({ length: 10 }, (_, i) => testUser(i + 1)));
    const broken = await replica(url, empty, clock);
    now += 1000;
    expect((await broken.part.poller.runCycle()).outcome).toBe('aborted');
    expect(broken.readiness.evaluate().checks.poll).toMatchObject({ ok: false, reason: expect.stringContaining('empty_list') });
    // The other replica's cycle after it succeeds, and is recorded as the last cycle.
    now += 1000;
    const ok = await two.part.poller.runCycle();
    expect(ok.outcome).toBe('ok');
    await expect.poll(async () => (await two.store.state.get<{ startedAt: string }>(LAST_CYCLE_KEY))?.startedAt).toBe(ok.startedAt);
    now += 5000;
    await expect.poll(() => broken.readiness.evaluate().checks.poll).toEqual({ ok: true });
  });
});
