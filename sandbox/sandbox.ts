import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { Agent } from 'undici';
import { systemClock } from '../src/clock.js';
import { createActivity, type Activity } from './activity.js';
import { createControl } from './control.js';
import { createCore } from './core.js';
import { createDeliverer } from './deliveries.js';
import { createDocumentKeeper } from './document.js';
import { buildServer } from './server.js';
import type { Sandbox, SandboxOptions } from './types.js';

/** How long stop() lets answers in flight finish (a client may be slow to read a 175 MB list). */
const STOP_GRACE_MS = 2000;

async function closeBounded(app: FastifyInstance, graceMs: number): Promise<void> {
  const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(force);
  }
}

/**
 * The sandbox upstream: data, control and deliveries exist from creation (tests may use the control
 * before start); start() listens, stop() stops listening, the activity loop and pending deliveries.
 * A stopped sandbox is not restarted: make a new one.
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? pino({ level: 'silent' });
  const clientSecret = options.clientSecret ?? 'sandbox-secret';
  const dispatcher = new Agent({ connections: 16 });
  const stopping = new AbortController();
  const core = createCore({
    seed: options.seed ?? 1,
    students: options.students ?? 50,
    clientId: options.clientId ?? 'sandbox-client',
    clientSecret,
    staticToken: options.staticToken,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 2_592_000,
    clock,
    deliverer: createDeliverer({
      secret: clientSecret, clock, log, dispatcher,
      timeScale: options.retryTimeScale ?? 1,
      timeoutMs: options.deliveryTimeoutMs ?? 10_000,
      onAttempt: (attempt) => core.events.emit('delivery', attempt),
      changed: () => core.events.emit('changed'),
    }),
  });
  const keeper = options.document
    ? createDocumentKeeper({ adapter: options.document, core, origin: { seed: options.seed ?? 1, students: options.students ?? 50 }, log })
    : undefined;
  const control = createControl(core);
  const activity: Activity | undefined = options.activity
    ? createActivity({ control, random: core.random, clock, log, intervalMs: options.activity.intervalMs, size: options.students ?? 50 })
    : undefined;
  let app: FastifyInstance | undefined;
  let starting: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  let url = '';
  let warming: Promise<void> | undefined;

  const start = async (): Promise<void> => {
    const kept = await keeper?.load();
    app = await buildServer(core, control, log, stopping.signal);
    const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
    url = address.replace('[::1]', '127.0.0.1');
    activity?.start();
    // A big school's lists take seconds to render the first time: do it now, between requests.
    warming = core.school.warm(stopping.signal).catch((error: unknown) => log.warn({ err: error }, 'sandbox list warm-up failed'));
    log.debug({ url, students: core.school.studentIds().length, ...(kept ? { school: kept } : {}) }, 'sandbox listening');
  };

  const stop = async (): Promise<void> => {
    stopping.abort(new Error('sandbox stopped'));
    await starting?.catch(() => undefined);
    await activity?.stop();
    await warming;
    await core.deliverer.stop();
    if (app) await closeBounded(app, STOP_GRACE_MS);
    // After the deliverer: the deliveries it cut short are kept as under way.
    await keeper?.flush();
    await dispatcher.close();
  };

  return {
    start: () => {
      if (stopped) return Promise.reject(new Error('the sandbox was stopped; create a new one'));
      starting ??= start();
      return starting;
    },
    stop: () => {
      stopped ??= stop();
      return stopped;
    },
    get url() {
      return url;
    },
    control,
  };
}
