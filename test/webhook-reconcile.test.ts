import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { createUpstreamClient, type UpstreamClient } from '../src/upstream/index.js';
import { reconcileWebhooks } from '../src/webhooks/reconcile.js';
import { createReconciler, type RegistrationState } from '../src/webhooks/reconciler.js';

/** Registration reconcile against the sandbox. */
const log = pino({ level: 'silent' });
const OURS = 'http://127.0.0.1:18080/webhooks/v2';
const FOREIGN = 'https://crm.example/hooks/school';
const EVENTS = ['invoice.created', 'invoice.updated'];

let sandbox: Sandbox;
let agent: Agent;
let upstream: UpstreamClient;

beforeEach(async () => {
  sandbox = createSandbox({ port: 0, students: 2, log });
  await sandbox.start();
  agent = new Agent();
  upstream = createUpstreamClient({
    baseUrl: sandbox.url, auth: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' }, dispatcher: agent, log,
    retry: { maxAttempts: 1 },
  });
});

afterEach(async () => {
  await sandbox.stop();
  await agent.close();
});

const writes = () => sandbox.control.requestCount('POST', '/api/v2/webhook') + sandbox.control.requestCount('DELETE', '/api/v2/webhook');
const registrations = () => sandbox.control.webhooks().map((w) => `${w.event} ${w.callbackUrl === OURS ? 'ours' : w.callbackUrl === FOREIGN ? 'foreign' : w.callbackUrl}`).sort();

describe('webhook registration reconcile against the sandbox', () => {
  it('converges: removes our duplicates and unlisted events, keeps foreign URLs, adds what is missing; a second run writes nothing', async () => {
    const dupA = await upstream.registerWebhook('invoice.created', OURS);
    const dupB = await upstream.registerWebhook('invoice.created', OURS);
    await upstream.registerWebhook('invoice.updated', FOREIGN);
    await upstream.registerWebhook('student.created', FOREIGN);
    const unlisted = await upstream.registerWebhook('lesson.moved', OURS);

    const before = writes();
    const first = await reconcileWebhooks(upstream, { events: EVENTS, callbackUrl: OURS, prune: true });
    expect(first.plan.keep.map((w) => w.id)).toEqual([dupA.id]);
    expect(first.plan.create).toEqual(['invoice.updated']);
    expect(first.deleted.sort()).toEqual([dupB.id, unlisted.id].sort());
    expect(writes() - before).toBe(3);
    expect(registrations()).toEqual(['invoice.created ours', 'invoice.updated foreign', 'invoice.updated ours', 'student.created foreign']);

    const settled = writes();
    const second = await reconcileWebhooks(upstream, { events: EVENTS, callbackUrl: OURS, prune: true });
    expect([second.created, second.deleted]).toEqual([[], []]);
    expect(writes()).toBe(settled);
  });

  it('leaves an unlisted event of ours alone without prune, and a dry run writes nothing', async () => {
    await upstream.registerWebhook('lesson.moved', OURS);
    const before = writes();
    const dry = await reconcileWebhooks(upstream, { events: EVENTS, callbackUrl: OURS, prune: true }, { dryRun: true });
    expect([dry.plan.create, dry.plan.delete.map((d) => d.why)]).toEqual([EVENTS, ['unlisted']]);
    expect(writes()).toBe(before);
    await reconcileWebhooks(upstream, { events: EVENTS, callbackUrl: OURS, prune: false });
    expect(registrations()).toEqual(['invoice.created ours', 'invoice.updated ours', 'lesson.moved ours']);
  });

  it('retries in the background while the upstream fails, says so in readiness, converges, and never deregisters on stop', async () => {
    sandbox.control.injectFault({ route: 'GET /api/v2/webhooks', kind: 'status', status: 503, times: 'always' });
    const states: RegistrationState[] = [];
    let onState: (state: RegistrationState) => void = () => {};
    const next = (status: RegistrationState['status']) => new Promise<void>((resolve) => {
      onState = (state) => state.status === status && resolve();
    });
    const reconciler = createReconciler({
      api: upstream, clock: systemClock, log, onStart: true, random: () => 0,
      wanted: () => ({ events: EVENTS, callbackUrl: OURS, prune: true }),
      backoff: { baseMs: 20, maxMs: 40 },
      onStateChange: (state) => {
        states.push(state);
        onState(state);
      },
    });
    const failing = next('pending');
    await reconciler.start();
    await failing;
    expect(reconciler.readiness()).toMatchObject({ ok: false, reason: expect.stringContaining('503') });
    const converged = next('converged');
    sandbox.control.clearFaults();
    await converged;
    expect(reconciler.readiness()).toMatchObject({ ok: true });
    await reconciler.stop();
    await reconciler.stop();
    expect(registrations()).toEqual(['invoice.created ours', 'invoice.updated ours']);
  });
});
