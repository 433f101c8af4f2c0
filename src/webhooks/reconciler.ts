import { backoff } from '../backoff.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { BridgeError, describeError, isBridgeError } from '../errors.js';
import type { RoleStore, StateStore } from '../store/index.js';
import type { Component } from '../lifecycle.js';
import type { ReadinessState } from '../readiness.js';
import { reconcileWebhooks, type ReconcileResult, type WebhookApi } from './reconcile.js';
import type { WantedRegistrations } from './reconcile-plan.js';

export type RegistrationState =
  | { status: 'disabled' }
  | { status: 'pending'; attempts: number; lastError?: string; nextAttemptAt?: string }
  /** `registrations`: ours as the reconcile left them (for the status page). */
  | { status: 'converged'; at: string; created: number; deleted: number; registrations: { id: number; event: string }[] };

export interface ReconcilerOptions {
  api: WebhookApi;
  /** Read at each attempt: the callback URL is known only once the server listens. */
  wanted: () => WantedRegistrations;
  clock: Clock;
  log: Logger;
  random?: () => number;
  /** Reconcile in the background at start (daemon with webhooks.reconcileOnStart). */
  onStart: boolean;
  /**
   * After the start's reconcile, check again this often (webhooks.reconcileEveryMinutes; 0: never).
   * Registrations can go away upstream (an admin's clean-up, a restored backup of the service), and
   * nothing else would notice: no event would arrive, and the upstream retries none to a callback it
   * no longer knows.
   */
  everyMs?: number;
  /** Resolves when requests can reach us (the server listens); awaited before the first attempt, rejects on abort. */
  whenListening?: (signal: AbortSignal) => Promise<void>;
  backoff?: { baseMs: number; maxMs: number };
  /** Told every state change (tests await it; nothing polls). */
  onStateChange?: (state: RegistrationState) => void;
  /**
   * Where replicas take turns: a reconcile holds the role `webhooks.reconcile` while it runs, and
   * leaves what it converged to in the state (REGISTRATIONS_KEY) for every replica's status page.
   */
  store?: { roles: Pick<RoleStore, 'acquire' | 'release'>; state: Pick<StateStore, 'put'> };
}

/** The role a reconcile holds, and the state key of the registrations the last one converged to. */
export const RECONCILE_ROLE = 'webhooks.reconcile';
export const REGISTRATIONS_KEY = 'webhooks.registrations';

export interface Reconciler extends Component {
  /** One reconcile now (CLI, admin route); updates the state on success. */
  reconcile(options?: { dryRun?: boolean; signal?: AbortSignal }): Promise<ReconcileResult>;
  state(): RegistrationState;
  /** Resolves once a reconcile (not a dry run) has succeeded: tests and start-up scripts await it. */
  converged(): Promise<void>;
  /** For readiness check `webhooks`. */
  readiness(): ReadinessState;
}

/** The back-off curve with up to half of each step taken off: never immediate, never in lock-step with other daemons. */
export function reconcileDelay(attempts: number, policy: { baseMs: number; maxMs: number }, random: number): number {
  return backoff(attempts, { ...policy, jitter: 0.5 }, random);
}

/**
 * Keeps our upstream registrations converged. At start it runs in the background and
 * retries with back-off until it succeeds, never holding start-up back; readiness says where it is.
 * It never deregisters on stop: the upstream keeps retrying deliveries while we are down, and
 * deleting our registrations would lose exactly those.
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { clock, log } = options;
  const random = options.random ?? Math.random;
  const policy = options.backoff ?? { baseMs: 1000, maxMs: 5 * 60_000 };
  let state: RegistrationState = options.onStart ? { status: 'pending', attempts: 0 } : { status: 'disabled' };
  let markConverged: () => void = () => {};
  const convergedOnce = new Promise<void>((resolve) => (markConverged = resolve));
  const setState = (next: RegistrationState) => {
    state = next;
    if (next.status === 'converged') markConverged();
    options.onStateChange?.({ ...next });
  };
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const converge = async (opts: { dryRun?: boolean; signal?: AbortSignal }) => {
    const result = await reconcileWebhooks(options.api, options.wanted(), { ...opts, log });
    if (!result.dryRun) {
      const registrations = [...result.plan.keep, ...result.created].map((w) => ({ id: w.id, event: w.event })).sort((a, b) => a.id - b.id);
      const converged: RegistrationState = { status: 'converged', at: new Date(clock.now()).toISOString(), created: result.created.length, deleted: result.deleted.length, registrations };
      setState(converged);
      await options.store?.state.put({ [REGISTRATIONS_KEY]: converged }).catch((error: unknown) => log.warn({ err: describeError(error) }, 'could not record the converged registrations'));
    }
    return result;
  };

  /** One replica at a time changes the registrations: two at once would each add what the other adds. */
  const reconcile: Reconciler['reconcile'] = async (opts = {}) => {
    const roles = options.store?.roles;
    if (opts.dryRun || !roles) return converge(opts);
    if ((await roles.acquire(RECONCILE_ROLE, clock.now())) === undefined) {
      throw new BridgeError('webhooks.busy', 'another replica is reconciling the webhook registrations now; try again in a moment', { retryable: true });
    }
    try {
      return await converge(opts);
    } finally {
      await roles.release(RECONCILE_ROLE).catch(() => {});
    }
  };

  /** Until one reconcile succeeds (or, for a later check, another replica is making it). */
  const untilConverged = async (signal: AbortSignal, first: boolean) => {
    for (let attempts = 1; !signal.aborted; attempts++) {
      try {
        const result = await reconcile({ signal });
        const changed = result.created.length + result.deleted.length > 0;
        const counts = { created: result.created.length, deleted: result.deleted.length, kept: result.plan.keep.length };
        const summary = `${result.created.length} created, ${result.deleted.length} deleted, ${result.plan.keep.length} kept`;
        if (first) log.info(counts, `webhook registrations converged: ${summary}`);
        else if (changed) log.warn(counts, `webhook registrations had changed upstream, converged again: ${summary}`);
        else log.debug(counts, 'webhook registrations checked: as they were');
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!first) {
          // A later check that fails is tried again at the next one, not in a burst at a service that
          // fails; it leaves the registrations as last converged, and so this readiness check (the
          // failed call is the `upstream` check's to report). Another replica reconciling is no failure.
          if (!(isBridgeError(error) && error.code === 'webhooks.busy')) log.warn({ err: error }, 'webhook registrations check failed; trying again at the next check');
          return;
        }
        const delay = reconcileDelay(attempts, policy, random());
        setState({ status: 'pending', attempts, lastError: describeError(error), nextAttemptAt: new Date(clock.now() + delay).toISOString() });
        log.warn({ err: error, attempts, retryInMs: delay }, 'webhook reconcile failed; retrying');
        await clock.sleep(delay, signal).catch(() => {});
      }
    }
  };

  const run = async (signal: AbortSignal) => {
    // The callback URL is only known once the server listens, and the server starts after us.
    if (options.whenListening && !(await options.whenListening(signal).then(() => true, () => false))) return;
    await untilConverged(signal, true);
    const every = options.everyMs ?? 0;
    while (every > 0 && !signal.aborted) {
      await clock.sleep(every, signal).catch(() => {});
      if (!signal.aborted) await untilConverged(signal, false);
    }
  };

  return {
    name: 'webhook-reconciler',
    reconcile,
    state: () => ({ ...state }),
    converged: () => convergedOnce,
    readiness() {
      if (state.status === 'converged') return { ok: true, detail: `registrations converged at ${state.at}` };
      if (state.status === 'disabled') return { ok: true, detail: 'not reconciled at start (webhooks.reconcileOnStart: false)' };
      if (state.attempts === 0) return { ok: false, reason: 'webhook registrations not reconciled yet' };
      return { ok: false, reason: `webhook reconcile failed ${state.attempts}×, next attempt ${state.nextAttemptAt}: ${state.lastError}` };
    },
    async start() {
      if (loop || !options.onStart) return;
      stopping = new AbortController();
      // In the background: start-up does not wait for the upstream.
      loop = run(stopping.signal).catch((error: unknown) => log.error({ err: error }, 'webhook reconciler crashed'));
    },
    async stop() {
      if (!loop) return;
      stopping?.abort(new Error('stopping'));
      await loop;
      loop = undefined;
    },
  };
}
