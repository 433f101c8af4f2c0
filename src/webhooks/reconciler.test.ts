import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import type { Webhook } from '../upstream/index.js';
import type { WebhookApi } from './reconcile.js';
import { createReconciler, reconcileDelay, type Reconciler } from './reconciler.js';
import type { Clock } from '../clock.js';

const URL_ = 'http://127.0.0.1:9/webhooks/v2';
const log = pino({ level: 'silent' });

/** An upstream whose first `failures` list calls fail; it records every write. */
function fakeApi(failures = 0, initial: Webhook[] = []) {
  let hooks = [...initial];
  let nextId = 100;
  const writes: string[] = [];
  let failuresLeft = failures;
  const api: WebhookApi = {
    async listWebhooks() {
      if (failuresLeft-- > 0) throw new BridgeError('upstream.network', 'connection refused', { retryable: true });
      return hooks.map((h) => ({ ...h }));
    },
    async registerWebhook(event, callbackUrl) {
      writes.push(`POST ${event}`);
      const hook = { id: nextId++, event, callbackUrl };
      hooks.push(hook);
      return hook;
    },
    async deleteWebhook(id) {
      writes.push(`DELETE ${id}`);
      if (!hooks.some((h) => h.id === id)) throw new BridgeError('upstream.not_found', 'Webhook was not found', { status: 404 });
      hooks = hooks.filter((h) => h.id !== id);
      return { id, isDeleted: true };
    },
  };
  return {
    api, writes, hooks: () => hooks,
    /** The upstream loses every registration (an admin's clean-up). */
    lose: () => void (hooks = []),
    failNext: (n: number) => void (failuresLeft = n),
  };
}

/** A clock whose sleeps are released one by one by the test. */
function steppedClock() {
  let now = 0;
  const sleeps: { ms: number; wake: () => void }[] = [];
  let onSleep: (() => void) | undefined;
  const clock: Clock = {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        sleeps.push({ ms, wake: () => ((now += ms), resolve()) });
        onSleep?.();
      }),
  };
  const nextSleep = () => new Promise<{ ms: number; wake: () => void }>((resolve) => {
    if (sleeps.length > 0) return resolve(sleeps.shift()!);
    onSleep = () => ((onSleep = undefined), resolve(sleeps.shift()!));
  });
  return { clock, nextSleep };
}

const running: Reconciler[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

function start(api: WebhookApi, clock: Clock, onStart = true, everyMs = 0) {
  let converged: () => void = () => {};
  const done = new Promise<void>((resolve) => (converged = resolve));
  const reconciler = createReconciler({
    api,
    wanted: () => ({ events: ['invoice.created', 'invoice.updated'], callbackUrl: URL_, prune: true }),
    clock, log, random: () => 0.5, onStart,
    backoff: { baseMs: 1000, maxMs: 8000 }, everyMs,
    onStateChange: (state) => state.status === 'converged' && converged(),
  });
  running.push(reconciler);
  return { reconciler, converged: done };
}

describe('reconciler', () => {
  it('retries with growing back-off in the background, reports pending, then converged', async () => {
    const { api, writes } = fakeApi(3);
    const { clock, nextSleep } = steppedClock();
    const { reconciler, converged } = start(api, clock);
    await reconciler.start();
    expect(reconciler.readiness()).toMatchObject({ ok: false });
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sleep = await nextSleep();
      delays.push(sleep.ms);
      expect(reconciler.readiness()).toMatchObject({ ok: false, reason: expect.stringContaining(`failed ${i + 1}×`) });
      sleep.wake();
    }
    await converged;
    expect(delays).toEqual([750, 1500, 3000]);
    expect(writes).toEqual(['POST invoice.created', 'POST invoice.updated']);
    expect(reconciler.readiness()).toMatchObject({ ok: true });
  });

  it('checks again every everyMs: registrations lost upstream are made again, a failed check keeps it ready', async () => {
    const fake = fakeApi();
    const { clock, nextSleep } = steppedClock();
    const { reconciler, converged } = start(fake.api, clock, true, 15 * 60_000);
    await reconciler.start();
    await converged;
    // As they were: nothing written, the check's time recorded.
    let sleep = await nextSleep();
    expect(sleep.ms).toBe(15 * 60_000);
    sleep.wake();
    sleep = await nextSleep();
    expect(sleep.ms).toBe(15 * 60_000);
    expect(fake.writes).toEqual(['POST invoice.created', 'POST invoice.updated']);
    const checked = reconciler.state();
    expect(checked).toMatchObject({ status: 'converged', created: 0, at: new Date(15 * 60_000).toISOString() });
    // Lost upstream, and the service down at the next check: tried again at the check after, still ready.
    fake.lose();
    fake.failNext(1);
    sleep.wake();
    sleep = await nextSleep();
    expect(sleep.ms).toBe(15 * 60_000);
    expect(reconciler.readiness()).toMatchObject({ ok: true });
    expect(reconciler.state()).toEqual(checked);
    expect(fake.writes).toHaveLength(2);
    sleep.wake();
    sleep = await nextSleep();
    expect(sleep.ms).toBe(15 * 60_000);
    expect(fake.writes).toEqual(['POST invoice.created', 'POST invoice.updated', 'POST invoice.created', 'POST invoice.updated']);
    expect(fake.hooks().map((h) => h.event)).toEqual(['invoice.created', 'invoice.updated']);
    expect(reconciler.state()).toMatchObject({ status: 'converged', created: 2, at: new Date(3 * 15 * 60_000).toISOString() });
    await reconciler.stop();
  });

  it('stop aborts a back-off wait, and never deregisters', async () => {
    const { api, writes } = fakeApi(100);
    const { clock, nextSleep } = steppedClock();
    const { reconciler } = start(api, clock);
    await reconciler.start();
    await nextSleep();
    await reconciler.stop();
    await reconciler.stop();
    expect(writes).toEqual([]);
  });

  it('treats a registration already gone as deleted', async () => {
    const { api } = fakeApi(0, [{ id: 1, event: 'invoice.created', callbackUrl: URL_ }, { id: 2, event: 'invoice.created', callbackUrl: URL_ }]);
    // Gone by the time we ask (another replica's reconcile, an admin): the list no longer has it.
    const gone: WebhookApi = { ...api, deleteWebhook: async (id) => { await api.deleteWebhook(id); throw new BridgeError('upstream.not_found', 'gone', { status: 404 }); } };
    const { clock } = steppedClock();
    const { reconciler } = start(gone, clock, false);
    const result = await reconciler.reconcile();
    expect(result.deleted).toEqual([2]);
    expect(reconciler.state()).toMatchObject({ status: 'converged', created: 1, deleted: 1 });
    // Or still listed, but marked deleted.
    const marked = fakeApi(0, [{ id: 1, event: 'invoice.created', callbackUrl: URL_ }, { id: 2, event: 'invoice.created', callbackUrl: URL_ }]);
    const soft: WebhookApi = {
      ...marked.api,
      listWebhooks: async () => (await marked.api.listWebhooks()).map((w) => (w.id === 2 && marked.writes.includes('DELETE 2') ? { ...w, isDeleted: true } : w)),
      deleteWebhook: async (id) => { marked.writes.push(`DELETE ${id}`); throw new BridgeError('upstream.not_found', 'gone', { status: 404 }); },
    };
    expect((await start(soft, clock, false).reconciler.reconcile()).deleted).toEqual([2]);
  });

  it('does not take a 404 to a delete for a deletion while the upstream still lists the registration', async () => {
    const { api, hooks } = fakeApi(0, [{ id: 1, event: 'invoice.created', callbackUrl: URL_ }, { id: 2, event: 'invoice.created', callbackUrl: URL_ }]);
    // Something between answers for the path (a proxy's HTML 404): the registration stays.
    const proxy: WebhookApi = { ...api, deleteWebhook: async () => { throw new BridgeError('upstream.not_found', 'upstream answered HTTP 404', { status: 404 }); } };
    const { clock } = steppedClock();
    const { reconciler } = start(proxy, clock, false);
    await expect(reconciler.reconcile()).rejects.toMatchObject({ code: 'webhooks.not_deleted', message: expect.stringContaining('registration #2 but still lists it') as unknown });
    expect(hooks().map((h) => h.id)).toContain(2);
    expect(reconciler.state()).toEqual({ status: 'disabled' });
  });

  it('does not take an answer of "deleted" for a deletion while the upstream still lists the registration, nor one of "not deleted"', async () => {
    const { api, hooks } = fakeApi(0, [{ id: 1, event: 'invoice.created', callbackUrl: URL_ }, { id: 2, event: 'invoice.created', callbackUrl: URL_ }]);
    const { clock } = steppedClock();
    const keeping: WebhookApi = { ...api, deleteWebhook: async (id) => ({ id, isDeleted: true }) };
    const kept = await start(keeping, clock, false).reconciler.reconcile().catch((error: unknown) => error as BridgeError);
    expect(kept).toMatchObject({ code: 'webhooks.not_deleted', message: expect.stringMatching(/^the upstream answered that it deleted registration #2 but still lists it/) as unknown });
    // What it did before (registered invoice.updated) is named; the deletion it did not make is not.
    expect((kept as BridgeError).message).toContain('(before that it registered #100 invoice.updated; run it again to finish)');
    expect((kept as BridgeError).message).not.toContain('deleted #2');
    const refusing: WebhookApi = { ...api, deleteWebhook: async (id) => ({ id, isDeleted: false }) };
    await expect(start(refusing, clock, false).reconciler.reconcile()).rejects.toMatchObject({
      code: 'webhooks.not_deleted', message: expect.stringMatching(/^the upstream answered that registration #2 was not deleted \(isDeleted: false\)/) as unknown,
    });
    expect(hooks().map((h) => h.id)).toContain(2);
  });

  it('names what it changed before a failure halfway', async () => {
    const { api, hooks } = fakeApi(0, [{ id: 1, event: 'invoice.created', callbackUrl: URL_ }, { id: 2, event: 'invoice.created', callbackUrl: URL_ }]);
    const refusing: WebhookApi = {
      ...api,
      registerWebhook: async () => {
        throw new BridgeError('upstream.http_error', 'upstream answered HTTP 422', { status: 422 });
      },
    };
    const { clock } = steppedClock();
    const { reconciler } = start(refusing, clock, false);
    // Wanted: invoice.created (#1 kept, #2 a duplicate) and invoice.updated, whose creation comes first and fails.
    await expect(reconciler.reconcile()).rejects.toMatchObject({ code: 'upstream.http_error', status: 422, message: 'upstream answered HTTP 422' });
    expect(hooks().map((h) => h.id)).toEqual([1, 2]);
    // Once a change was made, the error says which.
    const deleting: WebhookApi = { ...api, deleteWebhook: async () => { throw new BridgeError('upstream.network', 'connection reset', { retryable: true }); } };
    const second = start(deleting, clock, false).reconciler;
    await expect(second.reconcile()).rejects.toMatchObject({
      code: 'upstream.network', retryable: true,
      message: 'connection reset (before that it registered #100 invoice.updated; run it again to finish)',
    });
  });

  it('dry run plans without writing or changing state; disabled is ready', async () => {
    const { api, writes } = fakeApi();
    const { clock } = steppedClock();
    const { reconciler } = start(api, clock, false);
    await reconciler.start();
    const result = await reconciler.reconcile({ dryRun: true });
    expect(result.plan.create).toEqual(['invoice.created', 'invoice.updated']);
    expect(writes).toEqual([]);
    expect(reconciler.state()).toEqual({ status: 'disabled' });
    expect(reconciler.readiness()).toMatchObject({ ok: true });
  });

  it('reconcileDelay doubles up to the cap, with up to half taken off', () => {
    const policy = { baseMs: 1000, maxMs: 8000 };
    expect([1, 2, 3, 4, 5, 60].map((n) => reconcileDelay(n, policy, 0.999999))).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect(reconcileDelay(4, policy, 0)).toBe(8000);
  });

  it('takes its turn among replicas: refused while another holds the role, recorded for all once converged', async () => {
    const { api, writes } = fakeApi();
    const { clock } = steppedClock();
    let holder: string | undefined = 'another replica';
    const calls: string[] = [];
    const put: Record<string, unknown>[] = [];
    const store = {
      roles: {
        acquire: async (role: string) => {
          calls.push(`acquire ${role}`);
          holder ??= 'me';
          return holder === 'me' ? 1 : undefined;
        },
        release: async (role: string) => {
          calls.push(`release ${role}`);
          holder = undefined;
        },
      },
      state: { put: async (patch: Record<string, unknown>) => void put.push(patch) },
    };
    const reconciler = createReconciler({ api, wanted: () => ({ events: ['invoice.created'], callbackUrl: URL_, prune: true }), clock, log, onStart: false, store });
    await expect(reconciler.reconcile()).rejects.toMatchObject({ code: 'webhooks.busy', retryable: true });
    expect(writes).toEqual([]);
    // A dry run writes nothing, so it needs no turn.
    await reconciler.reconcile({ dryRun: true });
    holder = undefined;
    await reconciler.reconcile();
    expect(writes).toEqual(['POST invoice.created']);
    expect(calls).toEqual(['acquire webhooks.reconcile', 'acquire webhooks.reconcile', 'release webhooks.reconcile']);
    expect(put).toEqual([{ 'webhooks.registrations': expect.objectContaining({ status: 'converged', registrations: [{ id: 100, event: 'invoice.created' }] }) }]);
  });
});
