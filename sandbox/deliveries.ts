import type { Logger } from 'pino';
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../src/clock.js';
import { describeError } from '../src/errors.js';
import { signatureHeader } from '../src/signature/index.js';
import { deliverySchedule, nextRetryDelay } from './backoff.js';
import type { DeliveryAttempt } from './types.js';

/**
 * Webhook deliveries as the service makes them: a JSON POST of `{"event","object"}` signed with the
 * client secret, re-signed at every attempt (the timestamp is the attempt's); only 200 counts; any
 * other answer, a network error or a timeout is retried on the (time-scaled) back-off schedule.
 * Each delivery is one async loop; stop() aborts their waits and sends and waits for them.
 */
export interface DelivererOptions {
  secret: string;
  clock: Clock;
  log: Logger;
  dispatcher: Dispatcher;
  timeScale: number;
  timeoutMs: number;
  onAttempt: (attempt: DeliveryAttempt) => void;
  /** Told when a delivery starts or ends (the sandbox's document keeps those under way). */
  changed?: () => void;
}

export interface Deliverer {
  deliver(target: { id: number; callbackUrl: string }, event: string, object: unknown): void;
  log(): DeliveryAttempt[];
  flush(): Promise<void>;
  idle(): Promise<void>;
  stop(): Promise<void>;
  /** Deliveries neither delivered nor given up on (stopping does not give up on one). */
  outstanding(): SavedDelivery[];
  /** Takes up saved deliveries again where they stopped. */
  resume(saved: readonly SavedDelivery[]): void;
}

export interface SavedDelivery {
  webhookId: number;
  callbackUrl: string;
  event: string;
  body: string;
  /** The attempt to make next (1-based). */
  attempt: number;
}

/** The log keeps the latest attempts only, so a long-running demo does not grow without bound. */
const LOG_LIMIT = 10_000;

interface Running {
  saved: SavedDelivery;
  done: Promise<void>;
  /** Cuts the current back-off short. */
  wake: AbortController | undefined;
  /** Resolvers waiting for this delivery's next attempt (flush). */
  waiters: (() => void)[];
}

export function createDeliverer(options: DelivererOptions): Deliverer {
  const { clock, log } = options;
  const schedule = deliverySchedule(options.timeScale);
  const stopping = new AbortController();
  const running = new Map<number, Running>();
  const outstanding = new Map<number, SavedDelivery>();
  const entries: DeliveryAttempt[] = [];
  let nextId = 1;

  const record = (entry: DeliveryAttempt, state: Running): void => {
    entries.push(entry);
    if (entries.length > LOG_LIMIT) entries.splice(0, entries.length - LOG_LIMIT);
    log.debug({ delivery: entry.deliveryId, event: entry.event, url: entry.url, attempt: entry.attempt, status: entry.status, error: entry.error, outcome: entry.outcome }, 'webhook delivery attempt');
    for (const resolve of state.waiters.splice(0)) resolve();
    options.onAttempt(entry);
  };

  const send = async (url: string, body: string): Promise<{ status: number | null; error: string | null; header: string }> => {
    const header = signatureHeader(options.secret, body, Math.floor(clock.now() / 1000));
    try {
      const response = await request(url, {
        method: 'POST', dispatcher: options.dispatcher, body,
        headers: { 'Content-Type': 'application/json', 'Webhook-Signature': header, 'User-Agent': 'schoolbridge-sandbox' },
        headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs,
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(options.timeoutMs)]),
      });
      await response.body.dump();
      return { status: response.statusCode, error: null, header };
    } catch (error) {
      return { status: null, error: describeError(error), header };
    }
  };

  const run = async (deliveryId: number, target: { id: number; callbackUrl: string }, event: string, body: string, state: Running): Promise<void> => {
    for (let attempt = state.saved.attempt; ; attempt++) {
      state.saved.attempt = attempt;
      const at = new Date(clock.now()).toISOString();
      const result = await send(target.callbackUrl, body);
      const delay = result.status === 200 ? undefined : nextRetryDelay(schedule, attempt);
      const outcome = result.status === 200 ? 'delivered' : delay === undefined || stopping.signal.aborted ? 'failed' : 'retry';
      record({
        deliveryId, webhookId: target.id, event, url: target.callbackUrl, attempt, at, status: result.status, error: result.error,
        outcome, nextAttemptInMs: outcome === 'retry' ? (delay ?? null) : null, signatureHeader: result.header, body,
      }, state);
      if (outcome !== 'retry' || delay === undefined) {
        // Ended for good: delivered, or out of attempts. One cut short by stopping stays outstanding.
        if (!stopping.signal.aborted) outstanding.delete(deliveryId);
        return;
      }
      state.saved.attempt = attempt + 1;
      state.wake = new AbortController();
      try {
        await clock.sleep(delay, AbortSignal.any([stopping.signal, state.wake.signal]));
      } catch {
        if (stopping.signal.aborted) return;
      } finally {
        state.wake = undefined;
      }
    }
  };

  const start = (saved: SavedDelivery): void => {
    if (stopping.signal.aborted) return;
    const deliveryId = nextId++;
    const state: Running = { saved, done: Promise.resolve(), wake: undefined, waiters: [] };
    outstanding.set(deliveryId, saved);
    options.changed?.();
    state.done = run(deliveryId, { id: saved.webhookId, callbackUrl: saved.callbackUrl }, saved.event, saved.body, state).finally(() => {
      running.delete(deliveryId);
      for (const resolve of state.waiters.splice(0)) resolve();
      options.changed?.();
    });
    running.set(deliveryId, state);
  };

  return {
    deliver(target, event, object) {
      start({ webhookId: target.id, callbackUrl: target.callbackUrl, event, body: JSON.stringify({ event, object }), attempt: 1 });
    },
    outstanding: () => [...outstanding.values()].map((saved) => ({ ...saved })),
    resume(saved) {
      for (const delivery of saved) start({ ...delivery });
    },
    log: () => entries.map((entry) => ({ ...entry })),
    async flush() {
      const next = [...running.values()].map((state) => new Promise<void>((resolve) => state.waiters.push(resolve)));
      for (const state of running.values()) state.wake?.abort();
      await Promise.all(next);
    },
    async idle() {
      while (running.size > 0) await Promise.all([...running.values()].map((state) => state.done));
    },
    async stop() {
      stopping.abort(new Error('sandbox stopped'));
      await Promise.all([...running.values()].map((state) => state.done));
    },
  };
}
