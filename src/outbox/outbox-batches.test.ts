import { describe, expect, it } from 'vitest';
import type { OutboxStore, RoleStore, Settlement, StoreChange } from '../store/index.js';
import type { Connector } from '../connectors/types.js';
import { BridgeError } from '../errors.js';
import { INTAKE_FIRST } from './intake-first.js';
import { eventually } from '../../test/support/net.js';
import { change, nextEvent, scriptedConnector } from '../../test/support/outbox.js';
import { retryable, rejected, deferred, counting, queuedBeforeStart, settlementHeldForClaim, setup, type SetupOptions } from '../../test/support/outbox-setup.js';

/** A linger no test outlives: a worker that lingers when it should not holds a delivery back this long. */
const LINGER_MS = 60_000;
/**
 * How long a test waits for what a worker should do at once: far under LINGER_MS, so lingering still
 * fails the test, and far over what a machine busy with other suites takes.
 */
const WAIT_MS = 15_000;

describe('outbox batches', () => {
  it('holds new batches back while held (a batch in flight finishes), and delivers them once released', async () => {
    const gate = deferred();
    const started = deferred();
    const a = scriptedConnector(async () => {
      started.resolve();
      await gate.promise;
      return { status: 'done' };
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const s2 = change('students', 2);
    await outbox.enqueue([s1]);
    await started.promise;
    expect(a.calls).toEqual([[s1.id]]); // in flight
    const resume = outbox.holdDeliveries();
    const again = outbox.holdDeliveries();
    await outbox.enqueue([s2]);
    gate.resolve();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]); // the batch in flight finished; nothing new started
    expect((await outbox.counts()).get('a')).toEqual({ depth: 1, dead: 0 });
    resume();
    resume(); // releasing twice counts once: the other hold still stands
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    // The last release alone starts the held batch: awaited through the event, not whenIdle (which pumps by itself).
    const delivered = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === s2.id);
    again();
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s2.id]);
    expect((await outbox.counts()).get('a')).toBeUndefined();
  });

  it('runs no more batches at once than delivery.concurrency, nor than the connector allows', async () => {
    const gate = deferred();
    const full = deferred();
    const inFlight: Record<string, number> = { free: 0, single: 0 };
    const peaks: Record<string, number> = { free: 0, single: 0 };
    const measured = (name: string, maxConcurrency?: number) => {
      const base = scriptedConnector(async () => {
        inFlight[name]! += 1;
        peaks[name] = Math.max(peaks[name]!, inFlight[name]!);
        if (inFlight.free! >= 4 && inFlight.single! >= 1) full.resolve();
        await gate.promise;
        inFlight[name]! -= 1;
        return { status: 'done' };
      });
      const connector = maxConcurrency === undefined ? base.connector : { ...base.connector, maxConcurrency: () => maxConcurrency };
      return { connector, delivered: base.delivered };
    };
    const free = measured('free');
    const single = measured('single', 1);
    const { outbox } = await setup([
      { name: 'free', connector: free.connector },
      { name: 'single', connector: single.connector },
    ], { concurrency: 4 });
    await outbox.enqueue([1, 2, 3, 4, 5, 6, 7, 8].map((k) => change('students', k)));
    await full.promise;
    // A claim the worker started at the same moment would have been answered before this read (the
    // store answers in order), and its batch would have reached the connector: none did.
    await outbox.counts();
    expect(inFlight).toEqual({ free: 4, single: 1 });
    gate.resolve();
    await outbox.whenIdle();
    expect(peaks).toEqual({ free: 4, single: 1 });
    expect([free.delivered().length, single.delivered().length]).toEqual([8, 8]);
  });

  it('hands batches up to the batch size and applies per-record outcomes', async () => {
    const bad = change('students', 3);
    const a = scriptedConnector((r) => (r.id === bad.id ? rejected() : { status: 'done' }), 3);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { concurrency: 1 });
    const records = [1, 2, 3, 4, 5, 6, 7].map((k) => (k === 3 ? bad : change('students', k)));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    expect(a.calls).toEqual([records.slice(0, 3), records.slice(3, 6), records.slice(6)].map((batch) => batch.map((r) => r.id)));
    expect((await outbox.list()).map((d) => [d.recordId, d.status])).toEqual([[bad.id, 'dead']]);
    expect((await outbox.counts()).get('a')).toEqual({ depth: 0, dead: 1 });
  });

  it('serves a connector one replica at a time holds only while this replica holds its role', async () => {
    let holder: string | undefined = 'another replica';
    const asked: string[] = [];
    const roles: RoleStore = {
      async acquire(role) {
        asked.push(`acquire ${role}`);
        holder ??= 'me';
        return holder === 'me' ? 7 : undefined;
      },
      async release(role) {
        asked.push(`release ${role}`);
        if (holder === 'me') holder = undefined;
      },
      claimTick: async () => 'mine',
      finishTick: async () => {},
      holdings: async () => ({ roles: [], ticks: [] }),
    };
    let notice: ((change: StoreChange) => void) | undefined;
    const cacheSeen: number[] = [];
    // What each term's cache held open is closed when the next term starts, and at stop.
    const closedTerms: number[] = [];
    const a = scriptedConnector();
    const exclusive: Connector = {
      ...a.connector,
      exclusive: () => true,
      async deliver(ctx, records) {
        cacheSeen.push(ctx.cache.size);
        ctx.cache.set('ids', records.map((r) => r.id));
        ctx.cache.set('file', { close: async () => void closedTerms.push(cacheSeen.length) });
        return a.connector.deliver(ctx, records);
      },
    };
    const { outbox, clock } = await setup([{ name: 'files', connector: exclusive }], {
      roles,
      watch: (listener) => {
        notice = listener;
        return () => (notice = undefined);
      },
    });
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([]);
    expect(asked).toEqual(['acquire connector:files']);
    // The other replica gives the role up and says so: this one takes it and delivers.
    holder = undefined;
    const delivered = nextEvent(outbox, 'delivered');
    notice!('roles');
    await delivered;
    expect(a.delivered()).toEqual([s1.id]);
    expect(cacheSeen).toEqual([0]);
    // It loses the role (its heartbeat stopped, say) and takes it again later: its cache starts afresh.
    holder = 'another replica';
    clock.advance(2_001);
    const s2 = change('students', 2);
    await outbox.enqueue([s2]);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    holder = undefined;
    const again = nextEvent(outbox, 'delivered');
    notice!('roles');
    await again;
    expect(a.delivered()).toEqual([s1.id, s2.id]);
    expect(cacheSeen).toEqual([0, 0]);
    expect(closedTerms).toEqual([1]);
    await outbox.stop();
    expect(closedTerms).toEqual([1, 2]);
    expect(asked.at(-1)).toBe('release connector:files');
    expect(holder).toBeUndefined();
  });

  it('does not linger after a short claim made while a batch was settling: the settlement may free more', async () => {
    // Queued before this outbox starts: two versions of key 1, the second blocked behind the first, and key 2.
    const first = change('students', 1);
    const next = change('students', 1);
    const other = change('students', 2);
    const store = await queuedBeforeStart([first, other, next]);
    // The first batch's settlement is held until the claim made beside it has come back.
    const { wrap } = settlementHeldForClaim();
    // While the first batch is with the connector, one more record arrives: the claim beside the
    // settlement finds it alone (fewer than a batch), as `next` waits for that settlement.
    const late = change('students', 3);
    const gate = deferred();
    const b = scriptedConnector(undefined, 2);
    const gated: Connector = {
      ...b.connector,
      async deliver(ctx, records) {
        if (b.calls.length === 0) await gate.promise;
        return b.connector.deliver(ctx, records);
      },
    };
    const { outbox } = await setup([{ name: 'a', connector: gated }], { store, wrap, lingerMs: LINGER_MS, concurrency: 1 });
    const delivered = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === next.id);
    await outbox.enqueue([late]);
    gate.resolve();
    const outcome = await Promise.race([delivered.then(() => 'delivered'), new Promise((resolve) => setTimeout(resolve, WAIT_MS, 'lingering'))]);
    expect(outcome).toBe('delivered');
    expect(b.calls).toEqual([[first.id, other.id], [late.id], [next.id]]);
  });

  it('does not linger either when the claim made beside a settlement answers after it', async () => {
    // Queued before this outbox starts: its first claim, with nothing in flight, is a whole batch.
    const first = change('students', 1);
    const next = change('students', 1);
    const store = await queuedBeforeStart([first, next]);
    const { wrap } = settlementHeldForClaim((claimed) => claimed.length === 0, { answerLate: true });
    const a = scriptedConnector(undefined, 1);
    // Watched at the connector rather than through an event: the outbox delivers as it starts, and
    // may be done before the test, which gets it once started, could listen.
    const reached = deferred();
    const watched: Connector = {
      ...a.connector,
      async deliver(ctx, records) {
        const outcomes = await a.connector.deliver(ctx, records);
        if (records.some((r) => r.id === next.id)) reached.resolve();
        return outcomes;
      },
    };
    await setup([{ name: 'a', connector: watched }], { store, wrap, concurrency: 1, lingerMs: LINGER_MS });
    const outcome = await Promise.race([reached.promise.then(() => 'delivered'), new Promise((resolve) => setTimeout(resolve, WAIT_MS, 'lingering'))]);
    expect(outcome).toBe('delivered');
    expect(a.calls).toEqual([[first.id], [next.id]]);
  });

  it('closes what a connector keeps open in its cache when the outbox stops', async () => {
    const closed: string[] = [];
    const a = scriptedConnector();
    const keeping: Connector = {
      ...a.connector,
      async deliver(ctx, records) {
        if (!ctx.cache.has('file')) ctx.cache.set('file', { close: async () => void closed.push('file') });
        return a.connector.deliver(ctx, records);
      },
    };
    const { outbox } = await setup([{ name: 'a', connector: keeping }]);
    await outbox.enqueue([change('students', 1)]);
    await outbox.whenIdle();
    expect(closed).toEqual([]);
    await outbox.stop();
    expect(closed).toEqual(['file']);
  });

  it('gathers what arrives while it lingers after emptying its queue into one batch', async () => {
    const a = scriptedConnector(undefined, 100);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { lingerMs: 1000 });
    const first = change('students', 1);
    const delivered = nextEvent(outbox, 'delivered');
    await outbox.enqueue([first]);
    await delivered;
    // The queue is empty now: the next records, enqueued one by one, wait for each other.
    const later = [2, 3, 4, 5].map((n) => change('students', n));
    for (const record of later) await outbox.enqueue([record]);
    await outbox.whenIdle();
    expect(a.calls).toEqual([[first.id], later.map((r) => r.id)]);
  });

  it('claims what a batch in flight frees once it is settled, without asking when the next is due', async () => {
    // The claim made as a batch's connector call ends runs beside that batch's settlement (on
    // PostgreSQL on another connection), so it may find nothing: the next of the key, or the rest
    // of a created range, is freed only by the settlement. Here the settlement is held until that
    // claim has come back empty. A worker that then took its queue for empty would ask the store
    // when the next delivery is due, and linger, before it claimed what the settlement freed.
    const { wrap, calls } = settlementHeldForClaim((claimed) => claimed.length === 0);
    const a = scriptedConnector(undefined, 1);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap, concurrency: 1 });
    const first = change('students', 1);
    const next = change('students', 1);
    const delivered = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === next.id);
    await outbox.enqueue([first, next]);
    await delivered;
    expect(a.calls).toEqual([[first.id], [next.id]]);
    expect(calls.get('claim')).toBeGreaterThanOrEqual(2);
    expect(calls.get('nextRunAt') ?? 0).toBe(0);
  });

  describe('a batch claimed ahead', () => {
    /** The store's outbox, logging what each claim brought and each settlement's outcome. */
    const logged = (log: string[], onClaim: () => void = () => {}) => (target: OutboxStore): OutboxStore =>
      new Proxy(target, {
        get(object, prop, receiver) {
          const value: unknown = Reflect.get(object, prop, receiver);
          if (prop === 'claim') {
            return async (...args: Parameters<OutboxStore['claim']>) => {
              const claimed = await object.claim(...args);
              log.push(`claim ${claimed.map((c) => c.delivery.recordId).join(',')}`);
              onClaim();
              return claimed;
            };
          }
          if (prop === 'settle') {
            return (settlements: Settlement[]) => {
              log.push(`settle ${settlements.map((x) => (x.status === 'done' ? x.status : x.lastError)).join(',')}`);
              return object.settle(settlements);
            };
          }
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
        },
      });
    /** A connector of batches of 2, one at a time, whose first call waits for `gate`. */
    const gatedPairs = (gate: Promise<void>, log: string[]) => {
      const a = scriptedConnector(undefined, 2);
      const connector: Connector = {
        ...a.connector,
        maxConcurrency: () => 1,
        async deliver(ctx, records) {
          log.push(`deliver ${records.map((r) => r.id).join(',')}`);
          if (a.calls.length === 0) await gate;
          return a.connector.deliver(ctx, records);
        },
      };
      return { ...a, connector };
    };
    const within = <T>(promise: Promise<T>, ms = WAIT_MS) => Promise.race([promise.then(() => 'done'), new Promise((resolve) => setTimeout(resolve, ms, 'timed out'))]);
    /**
     * `count` records queued, an outbox delivering them in pairs, its first call held until `gate`
     * opens; resolves once the batch claimed ahead beside that call has come back.
     */
    async function claimedAhead(count: number, options: SetupOptions = {}) {
      const records = Array.from({ length: count }, (_, i) => change('students', i + 1));
      const store = await queuedBeforeStart(records);
      const log: string[] = [];
      const gate = deferred();
      const ahead = deferred();
      const a = gatedPairs(gate.promise, log);
      // Claimed, delivering, claimed: the third line is the claim made ahead.
      const started = await setup([{ name: 'a', connector: a.connector }], { ...options, store, concurrency: 1, wrap: logged(log, () => log.length === 3 && ahead.resolve()) });
      expect(await within(ahead.promise)).toBe('done');
      return { ...started, ids: records.map((r) => r.id), log, gate, calls: a.calls };
    }

    it('is claimed while the connector delivers a whole batch, and starts as that call ends', async () => {
      const { outbox, ids: [s1, s2, s3, s4, s5], log, gate, calls } = await claimedAhead(5);
      // The first batch is still with the connector; the second waits, claimed.
      expect(log).toEqual([`claim ${s1},${s2}`, `deliver ${s1},${s2}`, `claim ${s3},${s4}`]);
      gate.resolve();
      await outbox.whenIdle();
      // It went to the connector the moment the first call ended (beside that call's settlement): no claim was answered between.
      expect(log.slice(3, log.indexOf(`deliver ${s3},${s4}`))).toEqual(['settle done,done']);
      expect(calls).toEqual([[s1, s2], [s3, s4], [s5]]);
    });

    it('is not claimed after a short claim: what trickles in meanwhile goes out in one batch', async () => {
      const first = [1, 2, 3].map((k) => change('students', k));
      const store = await queuedBeforeStart(first);
      const log: string[] = [];
      const gate = deferred();
      const started = deferred();
      const a = scriptedConnector(undefined, 10);
      const connector: Connector = {
        ...a.connector,
        maxConcurrency: () => 1,
        async deliver(ctx, records) {
          started.resolve();
          if (a.calls.length === 0) await gate.promise;
          return a.connector.deliver(ctx, records);
        },
      };
      const { outbox } = await setup([{ name: 'a', connector }], { store, concurrency: 1, wrap: logged(log) });
      await started.promise;
      const later = [4, 5].map((k) => change('students', k));
      for (const record of later) await outbox.enqueue([record]);
      expect(log.filter((l) => l.startsWith('claim'))).toHaveLength(1);
      gate.resolve();
      await outbox.whenIdle();
      expect(a.calls).toEqual([first.map((r) => r.id), later.map((r) => r.id)]);
    });

    it('goes back, its attempt not counted, when a hold began while it was claimed, and goes out after it', async () => {
      const records = [1, 2].map((k) => change('students', k));
      const log: string[] = [];
      const armed: { hold?: () => () => void } = {};
      let resume: (() => void) | undefined;
      const a = scriptedConnector(undefined, 2);
      // The hold begins as the answer to the claim that finds the records is on its way to the worker.
      const { outbox, store } = await setup([{ name: 'a', connector: a.connector }], { wrap: logged(log, () => void (armed.hold && log.at(-1) !== 'claim ' && (resume ??= armed.hold()))) });
      armed.hold = () => outbox.holdDeliveries();
      await outbox.enqueue(records);
      await outbox.whenIdle();
      const why = 'outbox.held: claimed while deliveries were held; handed back before it started';
      expect(a.calls).toEqual([]);
      expect((await store.outbox.list()).map((d) => [d.status, d.attempts, d.lastError])).toEqual([['pending', 0, why], ['pending', 0, why]]);
      resume!();
      await outbox.whenIdle();
      expect(a.calls).toEqual([records.map((r) => r.id)]);
    });

    it('goes back once the store takes its settlement again, when it could not at first', async () => {
      const records = [1, 2].map((k) => change('students', k));
      const log: string[] = [];
      const armed: { hold?: () => () => void } = {};
      let resume: (() => void) | undefined;
      let failing = 1;
      const a = scriptedConnector(undefined, 2);
      const failOnce = (target: OutboxStore): OutboxStore => new Proxy(target, {
        get(object, prop, receiver) {
          const value: unknown = Reflect.get(object, prop, receiver);
          if (prop === 'settle' && failing > 0) {
            return async () => {
              failing -= 1;
              throw new BridgeError('store.unavailable', 'the store cannot write now', { retryable: true });
            };
          }
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(object) : value;
        },
      });
      const onClaim = () => void (armed.hold && log.at(-1) !== 'claim ' && (resume ??= armed.hold()));
      const { outbox, store, clock } = await setup([{ name: 'a', connector: a.connector }], { wrap: (target) => failOnce(logged(log, onClaim)(target)) });
      armed.hold = () => outbox.holdDeliveries();
      await outbox.enqueue(records);
      await eventually(() => (clock.slept.includes(1000) ? true : undefined), 10_000, 'the worker\'s wait before it settles again');
      clock.advance(1000);
      await outbox.whenIdle();
      expect(failing).toBe(0);
      const why = 'outbox.held: claimed while deliveries were held; handed back before it started';
      expect((await store.outbox.list()).map((d) => [d.status, d.attempts, d.lastError])).toEqual([['pending', 0, why], ['pending', 0, why]]);
      resume!();
      await outbox.whenIdle();
      expect(a.calls).toEqual([records.map((r) => r.id)]);
    });

    it('goes back, its attempt not counted, when the outbox stops while it waits', async () => {
      const { outbox, store, ids: [s1, s2, s3, s4], log, gate, calls } = await claimedAhead(4);
      const stopped = outbox.stop();
      gate.resolve();
      await stopped;
      expect(calls).toEqual([[s1, s2]]);
      const why = 'outbox.held: handed back before it started, as the outbox stopped';
      expect(log).toContain(`settle ${why},${why}`);
      expect((await store.outbox.list()).map((d) => [d.recordId, d.status, d.attempts, d.lastError])).toEqual([[s3, 'pending', 0, why], [s4, 'pending', 0, why]]);
    });

    it('goes back and is claimed afresh when it waited for half of its lease', async () => {
      const { outbox, clock, ids: [s1, s2, s3, s4], log, gate, calls } = await claimedAhead(4, { leaseMs: 1000 });
      clock.advance(600);
      gate.resolve();
      await outbox.whenIdle();
      const why = 'outbox.held: claimed ahead; handed back as it waited for half its lease';
      expect(log).toContain(`settle ${why},${why}`);
      expect(calls).toEqual([[s1, s2], [s3, s4]]);
      expect(log.filter((l) => l === `claim ${s3},${s4}`)).toHaveLength(2);
    });
  });

  it('a throwing connector or a wrong number of outcomes retries the whole batch', async () => {
    let mode: 'throw' | 'short' | 'ok' = 'throw';
    const connector: Connector = {
      ...scriptedConnector().connector,
      batchSize: () => 10,
      async deliver(_ctx, records) {
        if (mode === 'throw') throw new Error('boom');
        if (mode === 'short') return [{ status: 'done' }];
        return records.map(() => ({ status: 'done' as const }));
      },
    };
    const { outbox, clock } = await setup([{ name: 'a', connector }]);
    await outbox.enqueue([change('students', 1), change('students', 2)]);
    await outbox.whenIdle();
    expect((await outbox.list()).map((d) => d.lastError)).toEqual(['outbox.deliver_failed: boom', 'outbox.deliver_failed: boom']);
    mode = 'short';
    clock.advance(1000);
    await outbox.whenIdle();
    expect((await outbox.list()).map((d) => [d.status, d.lastError?.slice(0, 19)])).toEqual([['pending', 'outbox.bad_outcomes'], ['pending', 'outbox.bad_outcomes']]);
    mode = 'ok';
    clock.advance(2000);
    await outbox.whenIdle();
    expect(await outbox.list()).toEqual([]);
  });

  it('asks the store a bounded number of questions per delivery, whatever the backlog', async () => {
    const calls = new Map<string, number>();
    const a = scriptedConnector(() => retryable());
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap: counting(calls) });
    const backlog = Array.from({ length: 400 }, (_, i) => change('students', i + 1));
    await outbox.enqueue(backlog);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(400);
    // One claim and one settle per batch, plus a few looks at when the next one is due; no scans.
    expect(calls.get('settle')).toBe(400);
    expect(calls.get('claim')).toBeLessThan(400 + 20);
    expect(calls.get('nextRunAt') ?? 0).toBeLessThan(20);
    expect([calls.get('list'), calls.get('get')]).toEqual([undefined, undefined]);
  });

  it('holds its claims while the webhook intake is busy, at most maxHoldMs, and claims at once when it calms', async () => {
    let now = 50_000;
    let busy = true;
    let asked = deferred();
    const intake = {
      now: () => now,
      saturatedAt: () => {
        asked.resolve();
        return busy ? now : -Infinity;
      },
    };
    const seen: { now: number; busy: boolean }[] = [];
    const a = scriptedConnector(() => {
      seen.push({ now, busy });
      return { status: 'done' };
    });
    // The outbox's start claims (nothing, yet): the hold runs from then.
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { intake });
    const [s1, s2] = [change('students', 1), change('students', 2)];
    asked = deferred();
    await outbox.enqueue([s1]);
    await asked.promise;
    // Held: a claim begun at that moment would have been answered before this read (the store
    // answers in order), and its batch would have reached the connector.
    expect((await outbox.counts()).get('a')).toEqual({ depth: 1, dead: 0 });
    expect(a.delivered()).toEqual([]);
    // Still busy, but maxHoldMs after the last claim: one batch goes.
    const first = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === s1.id);
    now += INTAKE_FIRST.maxHoldMs;
    await first;
    asked = deferred();
    await outbox.enqueue([s2]);
    await asked.promise;
    expect((await outbox.counts()).get('a')).toEqual({ depth: 1, dead: 0 });
    expect(a.delivered()).toEqual([s1.id]);
    // The intake calms: the held claim goes without waiting for maxHoldMs.
    const second = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === s2.id);
    busy = false;
    await second;
    expect(seen).toEqual([{ now: 50_000 + INTAKE_FIRST.maxHoldMs, busy: true }, { now: 50_000 + INTAKE_FIRST.maxHoldMs, busy: false }]);
  });
});
