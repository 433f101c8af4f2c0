import { describe, expect, it, onTestFinished } from 'vitest';
import { BridgeError } from '../errors.js';
import type { OutboxStore } from '../store/index.js';
import type { Outbox } from './outbox.js';
import { FAILING_MS } from './connector-checks.js';
import { retryAndReport } from './retry-report.js';
import { eventually } from '../../test/support/net.js';
import { change, nextEvent, roster, scriptedConnector } from '../../test/support/outbox.js';
import { deferred, rejected, retryable, setup } from '../../test/support/outbox-setup.js';

/** The store's outbox with its first `count` settlements refused as a store that cannot write refuses them. */
function failingSettles(count: number) {
  let left = count;
  const wrap = (target: OutboxStore): OutboxStore => new Proxy(target, {
    get(object, prop, receiver) {
      const value: unknown = Reflect.get(object, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (prop === 'settle' && left > 0) {
          left -= 1;
          throw new BridgeError('store.unavailable', 'the store cannot write now', { retryable: true });
        }
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
  return { wrap, left: () => left };
}

describe('outbox retries', () => {
  it('checks a connector again as soon as its deliveries fail, not at the next round', async () => {
    let up = true;
    const hook = scriptedConnector(() => (up ? { status: 'done' } : retryable()));
    hook.connector.check = async () => (up ? { ok: true } : { ok: false, reason: 'the receiver answers 503' });
    const { outbox, clock } = await setup([{ name: 'hook', connector: hook.connector }], { checkIntervalMs: 60_000 });
    await eventually(() => (outbox.connectorState('hook').ok ? true : undefined), 10_000, 'the first check');
    up = false;
    clock.advance(FAILING_MS);
    const failed = nextEvent(outbox, 'retry');
    await outbox.enqueue([change('students', 1)]);
    await failed;
    await eventually(() => (outbox.connectorState('hook').ok ? undefined : true), 10_000, 'the check to fail');
    expect(outbox.connectorState('hook')).toEqual({ ok: false, reason: 'the receiver answers 503' });
  });

  it('records a settlement the store could not take once it can again, and delivers nothing twice', async () => {
    const a = scriptedConnector(() => ({ status: 'done' }));
    const failing = failingSettles(2);
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { wrap: failing.wrap });
    await outbox.enqueue([change('students', 1)]);
    // The worker waits a second between tries: time moves on as each wait begins.
    for (let tries = 1; tries <= 2; tries++) {
      await eventually(() => (clock.slept.filter((ms) => ms === 1000).length >= tries ? true : undefined), 10_000, `the worker's wait #${tries}`);
      clock.advance(1000);
    }
    await outbox.whenIdle();
    expect(failing.left()).toBe(0);
    expect(a.delivered()).toHaveLength(1);
    expect(await outbox.counts()).toEqual(new Map());
  });

  it('starts no batch while the store cannot record what was delivered', async () => {
    const a = scriptedConnector(() => ({ status: 'done' }));
    const { wrap } = failingSettles(3);
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { wrap, concurrency: 1 });
    const records = [1, 2, 3].map((key) => change('students', key));
    await outbox.enqueue(records);
    for (let tries = 1; tries <= 3; tries++) {
      await eventually(() => (clock.slept.filter((ms) => ms === 1000).length >= tries ? true : undefined), 10_000, `the worker's wait #${tries}`);
      // Meanwhile only the batch whose outcome waits, and the one claimed beside its settlement (on
      // its way before the settlement failed), were delivered.
      expect(a.delivered()).toEqual([records[0]!.id, records[1]!.id]);
      clock.advance(1000);
    }
    await outbox.whenIdle();
    expect(a.delivered()).toEqual(records.map((r) => r.id));
    expect(await outbox.counts()).toEqual(new Map());
  });

  it('retries dead deliveries by hand a chunk per transaction, all of them, each once', async () => {
    let reject = true;
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const chunks: string[][] = [];
    const wrap = (store: OutboxStore): OutboxStore => ({
      ...store,
      retryDead: async (chunk, now) => {
        const answer = await store.retryDead(chunk, now);
        chunks.push(answer.ids);
        return answer;
      },
      retry: async (target, now) => {
        const ids = await store.retry(target, now);
        chunks.push(ids);
        return ids;
      },
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap, retryChunk: 2 });
    const records = [1, 2, 3, 4, 5].map((key) => change('students', key));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    expect((await outbox.counts()).get('a')).toEqual({ depth: 0, dead: 5 });
    const ids = records.map((r) => `a:${r.id}`);
    expect(await outbox.retryAllDead('a')).toEqual(ids);
    expect(chunks).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    await outbox.whenIdle();
    chunks.length = 0;
    reject = false;
    expect(await outbox.retryIds(ids.slice(0, 3))).toEqual(ids.slice(0, 3));
    expect(chunks).toEqual([ids.slice(0, 2), ids.slice(2, 3)]);
    await outbox.whenIdle();
    expect(a.delivered().slice(-3)).toEqual(records.slice(0, 3).map((r) => r.id));
  });

  it('reads the dead a chunk per store call, never all at once: a group\'s, and a list of them', async () => {
    // Odd keys are refused for good, even ones give up with an error of their own.
    const gone = { status: 'dead' as const, error: new BridgeError('test.gone', 'the receiver answered 410', { status: 410 }) };
    const a = scriptedConnector((record) => (Number(record.id.split(':')[1]) % 2 === 1 ? rejected() : gone));
    const reads: number[] = [];
    const wrap = (store: OutboxStore): OutboxStore => ({
      ...store,
      list: async (filter) => {
        const listed = await store.list(filter);
        reads.push(listed.length);
        return listed;
      },
      listDead: async (chunk) => {
        const listed = await store.listDead(chunk);
        reads.push(listed.length);
        return listed;
      },
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap, retryChunk: 2 });
    const records = [1, 2, 3, 4, 5, 6, 7].map((key) => change('students', key));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    const odd = records.filter((_, i) => i % 2 === 0).map((r) => `a:${r.id}`);
    expect(await outbox.deadIds('a', (d) => d.lastError?.startsWith('test.rejected') === true)).toEqual(odd);
    expect(reads).toEqual([2, 2, 2, 1]);
    expect(await outbox.deadIds('b', () => true)).toEqual([]);
    reads.length = 0;
    const all = records.map((r) => `a:${r.id}`);
    expect((await outbox.list({ state: 'dead', connector: 'a' })).map((d) => d.id)).toEqual(all);
    expect(reads).toEqual([2, 2, 2, 1]);
    reads.length = 0;
    expect((await outbox.list({ state: 'dead', limit: 3 })).map((d) => d.id)).toEqual(all.slice(0, 3));
    expect(reads).toEqual([2, 1]);
  });

  it('reports on a retry of many from the outbox\'s events and looks in the store a thousand at a time, never one by one', async () => {
    let reject = true;
    // Slow deliveries: each retried batch of 500 waits for the report's next look in the store.
    const batches: (() => void)[] = [];
    const nextLook = () => new Promise<void>((resolve) => batches.push(resolve));
    const a = scriptedConnector(async () => (reject ? rejected() : (await nextLook(), { status: 'done' })), 500);
    const reads = { get: 0, lookups: [] as number[] };
    const looked = () => batches.splice(0, 500).forEach((release) => release());
    const wrap = (store: OutboxStore): OutboxStore => ({
      ...store,
      get: async (id) => (reads.get++, looked(), store.get(id)),
      lookup: async (query) => (reads.lookups.push(query.ids?.length ?? 0), looked(), store.lookup(query)),
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap });
    const records = Array.from({ length: 1500 }, (_, i) => change('students', i + 1));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    reject = false;
    const report = await retryAndReport(outbox, { allDead: true }, 60_000);
    expect(report).toMatchObject({ failed: [] });
    expect(report!.delivered).toHaveLength(1500);
    expect(reads.get).toBe(0);
    expect(Math.max(0, ...reads.lookups)).toBeLessThanOrEqual(1000);
    expect(reads.lookups.length).toBeLessThan(20);
  });

  it('retryAllDead puts every dead delivery back, of one connector or of all', async () => {
    let reject = true;
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const b = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const { outbox } = await setup([{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['users'] }]);
    const u2 = change('users', 2);
    await outbox.enqueue([change('students', 1), u2]);
    await outbox.whenIdle();
    expect(Object.fromEntries(await outbox.counts())).toEqual({ a: { depth: 0, dead: 2 }, b: { depth: 0, dead: 1 } });
    reject = false;
    expect(await outbox.retryAllDead('b')).toEqual([`b:${u2.id}`]);
    await outbox.whenIdle();
    expect(Object.fromEntries(await outbox.counts())).toEqual({ a: { depth: 0, dead: 2 } });
    expect(await outbox.retryAllDead()).toHaveLength(2);
    await outbox.whenIdle();
    expect(await outbox.counts()).toEqual(new Map());
    expect([a.delivered().length, b.delivered().length]).toEqual([4, 2]);
  });

  it('retries by hand no dead delivery of a connector taken out of the config, and says why', async () => {
    const a = scriptedConnector(() => rejected());
    const gone = scriptedConnector(() => rejected());
    const first = await setup([{ name: 'a', connector: a.connector, streams: ['students'] }, { name: 'gone', connector: gone.connector, streams: ['users'] }]);
    const [s1, u2] = [change('students', 1), change('users', 2)];
    await first.outbox.enqueue([s1, u2]);
    await first.outbox.whenIdle();
    await first.outbox.stop();
    // The daemon starts again with `gone` out of the config: its dead delivery is kept, as it was.
    const { outbox, metrics } = await setup([{ name: 'a', connector: a.connector, streams: ['students'] }], { store: first.store });
    // Its dead delivery still counts where an operator alerts on it.
    expect(await metrics.metrics()).toMatch(/^schoolbridge_outbox_dead\{connector="gone"\} 1$/m);
    const why = 'connector "gone" is not in the config: its deliveries are kept, but nothing delivers them; add it back to the config to retry them';
    await expect(outbox.retry(`gone:${u2.id}`)).rejects.toMatchObject({ code: 'outbox.invalid_connector', message: why });
    await expect(outbox.retryAllDead('gone')).rejects.toMatchObject({ code: 'outbox.invalid_connector', message: why });
    expect(await outbox.retryIds([`gone:${u2.id}`])).toEqual([]);
    // A name neither configured nor owed anything is no connector: said so, not "nothing to retry".
    const none = 'no connector "nosuch" in the config, and nothing owed to one of that name (connectors: a)';
    await expect(outbox.retryAllDead('nosuch')).rejects.toMatchObject({ code: 'outbox.not_found', message: none });
    expect(await outbox.unknown('nosuch')).toBe(none);
    expect(await outbox.unknown('gone')).toBeUndefined();
    expect(await outbox.unknown('a')).toBeUndefined();
    expect(await outbox.retryAllDead()).toEqual([`a:${s1.id}`]);
    await outbox.whenIdle();
    const report = await retryAndReport(outbox, { ids: [`gone:${u2.id}`] }, 1000);
    expect(report).toEqual({ retried: [], delivered: [], failed: [{ id: `gone:${u2.id}`, status: 'dead', lastError: why }] });
    expect(await outbox.list({ state: 'dead' })).toEqual([
      expect.objectContaining({ id: `a:${s1.id}`, status: 'dead' }),
      expect.objectContaining({ id: `gone:${u2.id}`, status: 'dead', attempts: 1 }),
    ]);
  });

  it('keeps its depth and dead counts equal to the deliveries it lists: deaths, retries by hand, a restart', async () => {
    let reject = true;
    const a = scriptedConnector((r) => (reject && Number(r.id.split(':')[1]) % 2 === 0 ? rejected() : { status: 'done' }));
    const b = scriptedConnector(() => retryable()); // never delivered: pending, retried later
    const connectors = [{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['users'] }];
    const first = await setup(connectors);
    const check = async (outbox: Outbox) => {
      const listed = await outbox.list();
      const summaries = await outbox.connectors();
      for (const name of ['a', 'b']) {
        const mine = listed.filter((d) => d.connector === name);
        const recount = { depth: mine.filter((d) => d.status !== 'dead').length, dead: mine.filter((d) => d.status === 'dead').length };
        const summary = summaries.find((s) => s.name === name);
        expect([name, summary?.depth, summary?.dead]).toEqual([name, recount.depth, recount.dead]);
      }
    };
    const dead = async (outbox: Outbox) => (await outbox.connectors()).reduce((sum, c) => sum + c.dead, 0);
    const records = [1, 2, 3, 4, 5, 6].map((k) => change('students', k)).concat([change('users', 7), change('users', 8)]);
    await first.outbox.enqueue(records);
    await first.outbox.whenIdle();
    expect((await first.outbox.connectors()).map((c) => [c.name, c.depth, c.dead])).toEqual([['a', 0, 4], ['b', 2, 0]]); // students 2, 4, 6 and users 8
    await check(first.outbox);
    reject = false;
    // Held, so that the two reads of a check see the same state.
    const release = first.outbox.holdDeliveries();
    expect(await first.outbox.retry(`a:${records[1]!.id}`)).toMatchObject({ status: 'pending' });
    await check(first.outbox); // pending again, before its delivery
    release();
    await first.outbox.whenIdle();
    await check(first.outbox);
    expect(await dead(first.outbox)).toBe(3);
    await first.outbox.stop();
    const second = await setup(connectors, { store: first.store, clock: first.clock });
    await check(second.outbox);
    expect(await dead(second.outbox)).toBe(3);
    const resume = second.outbox.holdDeliveries();
    await second.outbox.retryAllDead('a');
    await check(second.outbox);
    resume();
    await second.outbox.whenIdle();
    await check(second.outbox);
    expect((await second.outbox.connectors()).map((c) => [c.name, c.depth, c.dead])).toEqual([['a', 0, 0], ['b', 2, 0]]);
  });

  it('honours the retry delay a connector reports (Retry-After)', async () => {
    const a = scriptedConnector((_r, attempt) => (attempt === 1 ? { ...retryable('429'), retryAfterMs: 30_000 } : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([s1]);
    expect((await retry).delivery.runAt).toBe(clock.now() + 30_000);
    clock.advance(29_999);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(1);
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1);
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s1.id]);
  });

  it('holds every delivery to a receiver that asked to wait, then sends one first and the rest once it got through', async () => {
    // The receiver rate-limits: the four deliveries in flight at once are all asked to wait 10 s; then it takes everything.
    let limited = 4;
    const answer = deferred();
    const probe = deferred();
    let sentAfterWait = 0;
    const a = scriptedConnector(async () => {
      if (limited > 0) {
        limited -= 1;
        if (limited === 0) answer.resolve();
        await answer.promise;
        return { ...retryable('429'), retryAfterMs: 10_000 };
      }
      sentAfterWait += 1;
      if (sentAfterWait === 1) await probe.promise;
      return { status: 'done' };
    });
    let claiming = 0;
    const wrap = (target: OutboxStore): OutboxStore => ({
      ...target,
      claim: async (...args) => {
        claiming += 1;
        try {
          return await target.claim(...args);
        } finally {
          claiming -= 1;
        }
      },
    });
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { concurrency: 4, wrap });
    const changes = Array.from({ length: 8 }, (_, i) => change('students', i + 1));
    const retried = nextEvent(outbox, 'retry');
    await outbox.enqueue(changes);
    await retried;
    await outbox.whenIdle();
    // Four went out at once and were asked to wait; the other four did not start meanwhile.
    expect(a.delivered()).toHaveLength(4);
    clock.advance(9_999);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(4);
    // The wait is over: one delivery goes first, alone, while it is in flight.
    clock.advance(1);
    await eventually(() => (sentAfterWait === 1 && claiming === 0 ? true : undefined), 5000, 'the first delivery after the wait, and no claim beside it');
    expect(a.delivered()).toHaveLength(5);
    // Through: the rest follow, each change delivered once more.
    probe.resolve();
    await eventually(() => (a.delivered().length === 12 ? true : undefined), 5000, 'the other deliveries');
    await outbox.whenIdle();
    expect(new Set(a.delivered().slice(4))).toEqual(new Set(changes.map((c) => c.id)));
  });

  it.each(['sqlite', 'postgres'] as const)('retries a key when it is due while another key\'s delivery hangs (%s)', async (engine) => {
    const hang = deferred();
    const a = scriptedConnector(async (r, attempt) => {
      if (r.id.startsWith('students:1:')) {
        await hang.promise;
        return { status: 'done' };
      }
      // Asked to wait: with these tests' random() of 0, a back-off alone would retry at once.
      return attempt === 1 ? { ...retryable('429'), retryAfterMs: 2000 } : { status: 'done' };
    });
    // Claims in flight, watched: time moves on only once the worker has stopped claiming.
    let claiming = 0;
    const wrap = (target: OutboxStore): OutboxStore => new Proxy(target, {
      get(object, prop, receiver) {
        const value: unknown = Reflect.get(object, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop !== 'claim') return (value as (...a: unknown[]) => unknown).bind(object);
        return async (...args: Parameters<OutboxStore['claim']>) => {
          claiming += 1;
          try {
            return await object.claim(...args);
          } finally {
            claiming -= 1;
          }
        };
      },
    });
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { engine, wrap });
    onTestFinished(() => hang.resolve());
    const [s1, s2] = [change('students', 1), change('students', 2)];
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([s1, s2]);
    const { runAt } = (await retry).delivery;
    expect(a.delivered()).toEqual(expect.arrayContaining([s1.id, s2.id]));
    // The wake-up the worker set when it was idle (5 s) is past the retry: only the retry's own time can wake it.
    expect(runAt - clock.now()).toBe(2000);
    await eventually(() => (claiming === 0 ? true : undefined), 5000, 'the claims after the retry was recorded');
    clock.advance(runAt - clock.now());
    await eventually(() => (a.delivered().filter((id) => id === s2.id).length === 2 ? true : undefined), 5000, `${s2.id} tried again while ${s1.id} hangs`);
    expect(a.delivered().filter((id) => id === s1.id)).toHaveLength(1);
    hang.resolve();
    await outbox.whenIdle();
  });

  it('a delivery failing past maxAgeHours ends dead', async () => {
    const a = scriptedConnector(() => retryable());
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { maxAgeHours: 0.001 }); // 3.6 s
    let died: string | undefined;
    outbox.on('dead', ({ delivery }) => (died = delivery.lastError));
    await outbox.enqueue([change('students', 1)]);
    for (let i = 0; i < 10 && died === undefined; i++) {
      await outbox.whenIdle();
      clock.advance(1000);
    }
    await outbox.whenIdle();
    // Attempts at 0, 1 s and 3 s, the last one at the 3.6 s deadline: then dead.
    expect(died).toBe('expired after 4 attempts; last error: test.unavailable: try later');
    expect(a.delivered()).toHaveLength(4);
  });

  it('keeps a record until every connector is done with it', async () => {
    let bFails = true;
    const a = scriptedConnector();
    const b = scriptedConnector(() => (bFails ? retryable() : { status: 'done' }));
    const { outbox, clock } = await setup([
      { name: 'a', connector: a.connector },
      { name: 'b', connector: b.connector },
    ]);
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await outbox.whenIdle();
    expect((await outbox.list()).map((d) => [d.id, d.status])).toEqual([[`b:${s1.id}`, 'pending']]); // a's is done
    bFails = false;
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1000);
    // Had the record gone with a's delivery, b's retry would have had nothing to send (dead: record missing).
    expect((await delivered).delivery).toMatchObject({ id: `b:${s1.id}`, attempts: 2 });
    expect(b.received.map((r) => r.json)).toEqual([JSON.stringify(s1), JSON.stringify(s1)]);
    expect(await outbox.list()).toEqual([]);
  });

  it('reports queue depth, dead count and deliveries in its metrics', async () => {
    // Batches of 10: the three go in one, so per-batch counting must still count each delivery.
    const a = scriptedConnector((r) => (r.stream === 'users' ? rejected() : { status: 'done' }), 10);
    const b = scriptedConnector(() => retryable());
    const { outbox, metrics } = await setup([{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['roster'] }]);
    await outbox.enqueue([change('students', 1), change('users', 2), roster('2026-11-22')]);
    await outbox.whenIdle();
    const text = await metrics.metrics();
    expect(text).toContain('schoolbridge_outbox_depth{connector="a"} 0');
    expect(text).toContain('schoolbridge_outbox_dead{connector="a"} 1');
    expect(text).toContain('schoolbridge_outbox_depth{connector="b"} 1');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="done"} 2');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="dead"} 1');
    expect(text).toContain('schoolbridge_deliveries_total{connector="b",outcome="retry"} 1');
    expect(a.calls).toHaveLength(1);
    expect(text).toMatch(/schoolbridge_delivery_duration_seconds_count\{connector="a"\} 1\n/);
    expect(text).toMatch(/schoolbridge_delivery_lag_seconds_count\{connector="a"\} 2\n/);
  });
});
