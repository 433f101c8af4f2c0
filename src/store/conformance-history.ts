import { afterEach, describe, expect, it } from 'vitest';
import { event, freshRows, record, type StoreFactory } from './conformance.js';
import { HOUR_MS, hourOf, type Run } from './history-port.js';
import type { Claimed, Settlement, Store } from './port.js';

/**
 * The store's promises to the operator console, run against every engine beside conformance.ts:
 * attempts kept by the settlements that record them, runs, counts per hour, the name index, and the
 * console's lookups.
 */
const NOW = Date.parse('2100-01-01T10:30:00Z');

const settled = (c: Claimed, s: Partial<Settlement> & Pick<Settlement, 'status'>): Settlement => ({
  id: c.delivery.id, fence: c.delivery.fence, connector: c.delivery.connector, at: NOW, runAt: NOW + 60_000, attempts: c.delivery.attempts, lastError: 'x',
  ...(c.delivery.range ? { range: c.delivery.range } : {}), ...s,
} as Settlement);

const run = (over: Partial<Run> = {}): Run => ({
  kind: 'poll', trigger: 'schedule', startedAt: NOW, durationMs: 1200, outcome: 'ok',
  counts: { students: { fetched: 10, created: 2, updated: 1, deleted: 0 }, users: { fetched: 20, created: 0, updated: 3, deleted: 1 } }, ...over,
});

const student = (key: number, first: string, last: string, email: string) =>
  ({ key, chain: `c${String(key).padStart(11, '0')}`, json: JSON.stringify({ id: key, user: { id: 1000 + key, firstName: first, lastName: last, login: `u${key}`, additionalData: { email } } }) });

export function describeHistoryConformance(engine: string, factory: StoreFactory): void {
  describe(`store conformance, the console's history: ${engine}`, () => {
    const opened: Store[] = [];
    afterEach(async () => {
      for (const store of opened.splice(0).reverse()) await store.stop();
    });
    const open = async (which: 'open' | 'second' = 'open') => {
      const store = await factory[which]!();
      await store.start();
      opened.push(store);
      return store;
    };
    const claim = (store: Store, connector = 'a', limit = 10) => store.outbox.claim({ connector, limit, now: NOW, leaseMs: 60_000 });

    it('keeps each attempt that settles, with its outcome, status code, duration and error, and counts them per hour', async () => {
      const store = await open();
      await store.outbox.enqueue([record('r1', 'k:1'), record('r2', 'k:2'), record('r3', 'k:3')]);
      const [c1, c2, c3] = await claim(store);
      expect(await store.outbox.settle([
        settled(c1!, { status: 'done', durationMs: 12, httpStatus: 200 }),
        settled(c2!, { status: 'pending', durationMs: 30, httpStatus: 503, lastError: 'webhook.unavailable: answered 503' }),
        settled(c3!, { status: 'dead', durationMs: 5, httpStatus: 422, lastError: 'webhook.rejected: answered 422: {"email":"x@y"}' }),
      ])).toHaveLength(3);
      // A settlement under a fence that lost its lease is no attempt.
      expect(await store.outbox.settle([settled(c1!, { status: 'done' })])).toEqual([]);
      const kept = await store.history.attempts({ recordIds: ['r1', 'r2', 'r3'], limit: 10 });
      expect(kept.map((a) => [a.recordId, a.connector, a.outcome, a.httpStatus, a.durationMs, a.error]).sort()).toEqual([
        ['r1', 'a', 'done', 200, 12, undefined],
        ['r2', 'a', 'retry', 503, 30, 'webhook.unavailable: answered 503'],
        ['r3', 'a', 'dead', 422, 5, 'webhook.rejected: answered 422: {"email":"x@y"}'],
      ]);
      expect(kept.every((a) => a.at === NOW && a.enqueuedAt > 0 && a.enqueuedAt <= Date.now())).toBe(true);
      const hour = hourOf(NOW);
      expect(await store.history.tallies('delivery', NOW - 1)).toEqual([
        { kind: 'delivery', hour, label: 'a:dead', n: 1 }, { kind: 'delivery', hour, label: 'a:done', n: 1 }, { kind: 'delivery', hour, label: 'a:retry', n: 1 },
      ]);
    });

    it("keeps the attempts of a fresh snapshot's created changes, delivered from its range", async () => {
      const store = await open();
      await store.snapshot.begin('students', 'fresh');
      await store.snapshot.stageFresh('students', freshRows([student(1, 'Anna', 'Nowak', 'a@x'), student(2, 'Jan', 'Kos', 'j@x')]));
      await store.snapshot.applyFresh('students', { state: {}, created: { detectedAt: 'T0', connectors: ['a'], now: NOW - 5000 } });
      expect((await store.outbox.ranges())[0]).toMatchObject({ upto: 2, remaining: 2 });
      const batch = await claim(store);
      await store.outbox.settle([settled(batch[0]!, { status: 'done', durationMs: 3 }), settled(batch[1]!, { status: 'dead', lastError: 'nope' })]);
      const kept = await store.history.attempts({ prefixes: ['students:1:', 'students:2:'], limit: 10 });
      expect(kept.map((a) => [a.recordId, a.outcome, a.enqueuedAt]).sort()).toEqual([
        [batch[0]!.delivery.recordId, 'done', NOW - 5000], [batch[1]!.delivery.recordId, 'dead', NOW - 5000],
      ]);
      expect(await store.history.attempts({ prefixes: ['students:1'], limit: 1 })).toHaveLength(1);
    });

    it('finds attempts by record id and by prefix, newest first, and no other key\'s', async () => {
      const store = await open();
      await store.outbox.enqueue([record('students:12:aaa', 'students:12'), record('students:123:bbb', 'students:123'), record('users:12:ccc', 'users:12')]);
      const claimed = await claim(store);
      for (const c of claimed) await store.outbox.settle([settled(c, { status: 'done' })]);
      expect((await store.history.attempts({ prefixes: ['students:12:'], limit: 10 })).map((a) => a.recordId)).toEqual(['students:12:aaa']);
      expect((await store.history.attempts({ recordIds: ['users:12:ccc'], prefixes: ['students:123:'], limit: 10 })).map((a) => a.recordId))
        .toEqual(['users:12:ccc', 'students:123:bbb']);
    });

    it('records runs with state and their changes per hour, lists them newest first, and prunes old history', async () => {
      const store = await open();
      await store.history.recordRun(run({ startedAt: NOW - 40 * 86_400_000 }));
      await store.history.recordRun(run(), { 'poll.lastCycle': { at: 'x' } });
      await store.history.recordRun(run({ kind: 'export', trigger: 'manual', startedAt: NOW + 1000, outcome: 'failed', reason: 'poll.busy', message: 'busy', counts: { roster: { rows: 0 } } }));
      expect(await store.state.get('poll.lastCycle')).toEqual({ at: 'x' });
      const recent = await store.history.runs({ since: NOW - 86_400_000, limit: 10 });
      expect(recent.map((r) => [r.kind, r.outcome, r.reason])).toEqual([['export', 'failed', 'poll.busy'], ['poll', 'ok', undefined]]);
      expect(recent[1]).toMatchObject({ trigger: 'schedule', durationMs: 1200, counts: run().counts });
      expect((await store.history.runs({ since: 0, limit: 10, before: recent[0]!.id! })).map((r) => r.startedAt)).toEqual([NOW, NOW - 40 * 86_400_000]);
      const hour = hourOf(NOW);
      expect(await store.history.tallies('change', NOW - 3_600_000)).toEqual([
        { kind: 'change', hour, label: 'students:created', n: 2 }, { kind: 'change', hour, label: 'students:updated', n: 1 },
        { kind: 'change', hour, label: 'users:deleted', n: 1 }, { kind: 'change', hour, label: 'users:updated', n: 3 },
      ]);
      await store.outbox.enqueue([record('p1', 'k:p1')]);
      const [c] = await claim(store);
      await store.outbox.settle([settled(c!, { status: 'done', at: NOW - 20 * 86_400_000 })]);
      expect(await store.history.prune({ attempts: NOW - 14 * 86_400_000, runs: NOW - 30 * 86_400_000 }, 100)).toBeGreaterThanOrEqual(3);
      expect(await store.history.attempts({ recordIds: ['p1'], limit: 10 })).toEqual([]);
      expect((await store.history.runs({ since: 0, limit: 10 })).map((r) => r.startedAt)).toEqual([NOW + 1000, NOW]);
    });

    it('forgets old attempts and runs a chunk at a time, the oldest first, up to the first attempt kept', async () => {
      const store = await open();
      const day = 86_400_000;
      // Attempts in the order they were made; the fourth is recent, the fifth old again (a clock set back).
      const ages = [20, 19, 18, 1, 17];
      for (const [i, age] of ages.entries()) {
        await store.outbox.enqueue([record(`p${i}`, `k:p${i}`)]);
        const [c] = await claim(store);
        await store.outbox.settle([settled(c!, { status: 'done', at: NOW - age * day })]);
      }
      for (const age of [40, 39, 38]) await store.history.recordRun(run({ startedAt: NOW - age * day }));
      await store.history.recordRun(run());
      const before = { attempts: NOW - 14 * day, runs: NOW - 30 * day };
      const attempts = async () => (await store.history.attempts({ prefixes: ['p'], limit: 10 })).map((a) => a.recordId).sort();
      const runs = async () => (await store.history.runs({ since: 0, limit: 10 })).map((r) => (NOW - r.startedAt) / day);
      expect(await store.history.prune(before, 2)).toBeGreaterThanOrEqual(4);
      expect(await attempts()).toEqual(['p2', 'p3', 'p4']);
      expect(await runs()).toEqual([0, 38]);
      expect(await store.history.prune(before, 2)).toBeGreaterThanOrEqual(2);
      // The walk stops at the first attempt kept: the old one after it waits for it.
      expect(await attempts()).toEqual(['p3', 'p4']);
      expect(await runs()).toEqual([0]);
      expect(await store.history.prune(before, 2)).toBe(0);
      expect(await attempts()).toEqual(['p3', 'p4']);
    });

    it('adds counts of one hour together, whichever replica counted them', async () => {
      const one = await open();
      const two = factory.second ? await open('second') : one;
      const hour = hourOf(NOW);
      await one.history.count([{ hour, kind: 'webhook', label: 'stored', n: 2 }, { hour, kind: 'webhook', label: 'rejected:stale', n: 1 }]);
      await two.history.count([{ hour, kind: 'webhook', label: 'stored', n: 3 }, { hour: hour + HOUR_MS, kind: 'webhook', label: 'stored', n: 1 }]);
      expect(await one.history.tallies('webhook', NOW)).toEqual([
        { kind: 'webhook', hour, label: 'rejected:stale', n: 1 }, { kind: 'webhook', hour, label: 'stored', n: 5 },
        { kind: 'webhook', hour: hour + HOUR_MS, label: 'stored', n: 1 },
      ]);
      expect(await one.history.tallies('webhook', NOW + HOUR_MS)).toHaveLength(1);
    });

    it('indexes the names of the snapshot and follows its changes; a search ignores case and diacritics', async () => {
      const store = await open();
      await store.snapshot.begin('students', 'fresh');
      await store.snapshot.stageFresh('students', freshRows([student(1, 'Anna', 'Nowak', 'anna@example.com'), student(2, 'Łucja', 'Żółć', 'lucja@example.com'), student(3, 'Jan', 'Kos', 'jan@example.com')]));
      await store.snapshot.applyFresh('students', { state: {} });
      while (await store.people.refresh('students', 2));
      expect(await store.people.refresh('students', 2)).toBe(false);
      expect((await store.people.search({ text: 'lucja zolc' }, 10)).map((p) => [p.key, p.name, p.email, p.userId])).toEqual([[2, 'Łucja Żółć', 'lucja@example.com', 1002]]);
      expect((await store.people.search({ text: 'EXAMPLE.COM' }, 2)).map((p) => p.key)).toEqual([1, 2]);
      expect((await store.people.search({ id: 1003 }, 10)).map((p) => p.key)).toEqual([3]);
      await store.snapshot.begin('students', 'changes');
      await store.snapshot.stageChanges('students', [
        { key: 1, chain: 'd00000000001', body: JSON.stringify({ id: 1, user: { id: 1001, firstName: 'Anna', lastName: 'Kowalska' } }), rawHash: null },
        { key: 3, chain: 'e00000000003', body: null, rawHash: null },
      ]);
      await store.snapshot.applyChanges('students', { limit: 10, connectors: [], state: {}, now: NOW });
      while (await store.people.refresh('students', 10));
      expect((await store.people.search({ text: 'anna' }, 10)).map((p) => [p.name, p.chain])).toEqual([['Anna Kowalska', 'd00000000001']]);
      expect(await store.people.search({ text: 'jan' }, 10)).toEqual([]);
      expect((await store.people.get([{ stream: 'students', key: 2 }, { stream: 'users', key: 2 }, { stream: 'students', key: 1 }])).map((p) => p.key)).toEqual([2, 1]);
      // A person gone from the middle of the snapshot, followed one at a time: dropped by the step
      // that takes their mark, with people after it.
      await store.snapshot.begin('students', 'changes');
      await store.snapshot.stageChanges('students', [
        { key: 2, chain: 'f00000000002', body: null, rawHash: null },
        { key: 4, chain: 'f00000000004', body: student(4, 'Ewa', 'Lis', 'ewa@example.com').json, rawHash: null },
      ]);
      await store.snapshot.applyChanges('students', { limit: 10, connectors: [], state: {}, now: NOW });
      let steps = 0;
      while (await store.people.refresh('students', 1)) steps += 1;
      expect(steps).toBeGreaterThan(1);
      expect(await store.people.search({ text: 'lucja' }, 10)).toEqual([]);
      expect((await store.people.get([1, 2, 4].map((key) => ({ stream: 'students' as const, key })))).map((p) => p.key)).toEqual([1, 4]);
    });

    it('follows the people a cycle changed once caught up, and walks again after a change it was not caught up for', async () => {
      const store = await open();
      const names = async (stream: 'students' | 'users') => (await store.people.search({ text: 'example.com' }, 100)).filter((p) => p.stream === stream).map((p) => `${p.key} ${p.name}`);
      const change = async (stream: 'students' | 'users', rows: { key: number; chain: string; body: string | null }[]) => {
        await store.snapshot.begin(stream, 'changes');
        await store.snapshot.stageChanges(stream, rows.map((r) => ({ ...r, rawHash: null })));
        // Two rows per apply: the marks of every chunk count.
        for (let done = false; !done;) ({ done } = await store.snapshot.applyChanges(stream, { limit: 2, connectors: [], state: {}, now: NOW }));
      };
      const steps = async (stream: 'students' | 'users', limit: number) => {
        let n = 0;
        while (await store.people.refresh(stream, limit)) n += 1;
        return n;
      };
      const keys = Array.from({ length: 30 }, (_, i) => i + 1);
      await store.snapshot.begin('students', 'fresh');
      await store.snapshot.stageFresh('students', freshRows(keys.map((k) => student(k, 'Anna', `Nowak${k}`, `s${k}@example.com`))));
      await store.snapshot.applyFresh('students', { state: {} });
      expect(await steps('students', 10)).toBe(3);
      await change('students', [
        { key: 4, chain: 'd00000000004', body: student(4, 'Ewa', 'Lis', 'ewa@example.com').json },
        { key: 17, chain: 'd00000000017', body: null },
        { key: 31, chain: 'd00000000031', body: student(31, 'Jan', 'Kos', 'jan@example.com').json },
      ]);
      // One step for the three marked people, not a walk of the thirty.
      expect(await steps('students', 10)).toBe(1);
      const after = await names('students');
      expect(after).toHaveLength(30);
      expect(after).toContain('4 Ewa Lis');
      expect(after).toContain('31 Jan Kos');
      expect(after.some((n) => n.startsWith('17 '))).toBe(false);
      // A change while a walk is under way marks nobody, and the walk starts over: taking the index
      // for caught up then would leave the people after the first stretch out of it.
      const user = (key: number, login: string) => ({ key, chain: `u${String(key).padStart(11, '0')}`, json: JSON.stringify({ id: key, firstName: login, lastName: 'Kos', login, additionalData: { email: `${login}@example.com` } }) });
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(keys.map((k) => user(k, `user${k}`))));
      await store.snapshot.applyFresh('users', { state: {} });
      expect(await store.people.refresh('users', 10)).toBe(true);
      await change('users', [{ key: 2, chain: 'v00000000002', body: user(2, 'renamed').json }, { key: 25, chain: 'v00000000025', body: null }]);
      await steps('users', 10);
      const users = await names('users');
      expect(users).toHaveLength(29);
      expect(users).toContain('2 renamed Kos');
      expect(users.some((n) => n.startsWith('25 '))).toBe(false);
    });

    it('looks deliveries up by id and by key, retries several by id, and says who retries', async () => {
      const store = await open();
      await store.outbox.enqueue([record('x1', 'k:x'), record('x2', 'k:x'), record('y1', 'k:y', ['a', 'b'])]);
      const [x1, y1] = await claim(store);
      await store.outbox.settle([settled(x1!, { status: 'dead', lastError: 'gone' }), settled(y1!, { status: 'pending', lastError: 'later', runAt: NOW + 5000 })]);
      const byKey = await store.outbox.lookup({ keys: [{ connector: 'a', orderKey: 'k:x' }] });
      expect(byKey.map((d) => [d.id, d.status, d.waitingFor])).toEqual([['a:x1', 'dead', undefined], ['a:x2', 'pending', 'a:x1']]);
      expect((await store.outbox.lookup({ ids: ['b:y1', 'a:nothing'] })).map((d) => d.id)).toEqual(['b:y1']);
      expect(await store.outbox.retrying()).toEqual([{ connector: 'a', count: 1, nextRunAt: NOW + 5000, lastAttemptAt: NOW, lastError: 'later' }]);
      expect(await store.outbox.retry({ ids: ['a:y1', 'a:x1', 'a:x2'] }, NOW + 1)).toEqual(['a:x1', 'a:y1']);
      expect((await store.outbox.lookup({ ids: ['a:x1'] }))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    });

    it('finds stored events by a text of their body', async () => {
      const store = await open();
      await store.inbox.accept(event('inv1', { body: '{"event":"invoice.created","object":{"id":1,"description":"FV 12\\/11\\/2100 — English"}}' }), []);
      await store.inbox.accept(event('inv2', { body: '{"event":"invoice.created","object":{"id":2,"description":"FV 13/11/2100 50%_off"}}' }), []);
      expect((await store.inbox.search(['fv 12/11', 'fv 12\\/11'], 10)).map((e) => e.id)).toEqual(['inv1']);
      expect((await store.inbox.search(['50%_'], 10)).map((e) => e.id)).toEqual(['inv2']);
      expect(await store.inbox.search(['0%x'], 10)).toEqual([]);
      // As PHP's json_encode writes by default: what is past ASCII as \uXXXX, "/" as \/; quotes and backslashes escaped.
      await store.inbox.accept(event('inv3', { body: String.raw`{"event":"invoice.created","object":{"id":3,"buyer":"\u0141ucja \u017B\u00f3\u0142\u0107","note":"say \"hi\" on 1\/12","path":"C:\\x"}}` }), []);
      for (const text of ['Łucja Żółć', 'say "hi" on 1/12', 'C:\\x']) expect((await store.inbox.search([text], 10)).map((e) => e.id), text).toEqual(['inv3']);
      // The case of letters past ASCII is ignored too, in a body as written and as escaped.
      await store.inbox.accept(event('inv4', { body: '{"event":"invoice.created","object":{"id":4,"buyer":"ŚWIĘTOSŁAW Łęcki"}}' }), []);
      for (const text of ['łucja żółć', 'ŁUCJA ŻÓŁĆ', 'łUCJA']) expect((await store.inbox.search([text], 10)).map((e) => e.id), text).toEqual(['inv3']);
      for (const text of ['świętosław łęcki', 'łęCKI', 'Świętosław', 'świętosław']) expect((await store.inbox.search([text], 10)).map((e) => e.id), text).toEqual(['inv4']);
    });
  });
}
