import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import { sendPage } from '../console/html.js';
import { publicError, type Outbox } from '../outbox/index.js';
import type { PollPart } from '../poll/index.js';
import { dayStartInZone } from '../local-time.js';
import { publicText } from '../public-text.js';
import type { Readiness } from '../readiness.js';
import type { Store, TallyEntry } from '../store/index.js';
import { REGISTRATIONS_KEY, type RegistrationState, type Webhooks } from '../webhooks/index.js';
import { WEBHOOK_PATH } from '../webhooks/route.js';
import { createDailyTally } from './daily-tally.js';
import { renderStatusPage, type StatusSnapshot } from './page.js';
import { createPageRead, type PageRead } from '../page-read.js';
import { replicaViews } from './replicas.js';

export interface StatusSources {
  readiness: Readiness;
  clock: Clock;
  timezone: string;
  callbackUrl: () => string;
  outbox: Outbox;
  webhooks: Webhooks;
  poll: PollPart;
  store: Pick<Store, 'replicaId' | 'replicas' | 'roles' | 'state' | 'history'>;
  /** This process's webhook counts per hour that are not in the store yet (app.ts intakeCounts). */
  intakeCounts?: { unflushed(): TallyEntry[] };
  /** The operator console's part of the page (console/routes.ts). */
  console?: { shell(): Promise<string> };
}

/**
 * Registrations as the last successful reconcile left them (ids and events only): this replica's, or,
 * until it has converged itself, what another replica's reconcile recorded in the store.
 */
async function registrations(sources: StatusSources, read: PageRead): Promise<StatusSnapshot['webhooks']> {
  const own = sources.webhooks.reconciler.state();
  const recorded = own.status === 'converged' ? undefined : await read(sources.store.state.get<RegistrationState>(REGISTRATIONS_KEY));
  const state = recorded?.status === 'converged' ? recorded : own;
  const text =
    state.status === 'converged'
      ? `converged at ${state.at}`
      : state.status === 'disabled'
        ? 'not reconciled at start'
        : `pending (${state.attempts} attempts${state.lastError ? `: ${publicText(state.lastError)}` : ''})`;
  return { callbackUrl: sources.callbackUrl(), state: text, registrations: state.status === 'converged' ? state.registrations : [] };
}

/**
 * Deliveries to /webhooks/v2 since local midnight by every replica, restarts included: the store's
 * counts per hour (`webhook` tallies, as the console's runs show them) and this process's not stored
 * yet. A quarantined delivery is also counted as rejected (`rejected:stale`), so it is not added twice.
 */
export function webhooksToday(entries: readonly TallyEntry[], since: number): { received: number; rejected: number } {
  let received = 0;
  let rejected = 0;
  for (const entry of entries) {
    if (entry.kind !== 'webhook' || entry.hour < since || entry.label === 'quarantined') continue;
    received += entry.n;
    if (entry.label.startsWith('rejected:')) rejected += entry.n;
  }
  return { received, rejected };
}

/**
 * `GET /`: the human status page, and `GET /status.json`, the same figures for scripts (README
 * "Observe"). Both are public: ids, counts, times, reasons and error codes, never a secret or
 * personal data. Deliveries to /webhooks/v2 today are the store's counts (webhooksToday); this
 * process's own tally of them, kept as they are answered, stands in while the store cannot be read.
 */
export function registerStatusRoutes(http: FastifyInstance, sources: StatusSources): { snapshot(): Promise<StatusSnapshot> } {
  const tally = createDailyTally(['received', 'rejected'] as const, sources.timezone);
  // A callback hook, not an async one: no promise per request on the webhooks' hot path.
  http.addHook('onResponse', (request, reply, done) => {
    const url = request.routeOptions.url;
    if (url === WEBHOOK_PATH || url === `${WEBHOOK_PATH}/`) {
      const now = sources.clock.now();
      tally.add('received', now);
      if (reply.statusCode !== 200) tally.add('rejected', now);
    }
    done();
  });

  const read = createPageRead(sources.clock);
  /** What the store cannot tell while it is down or does not answer is left empty; the readiness reasons say why. */
  const snapshot = async (): Promise<StatusSnapshot> => {
    const now = sources.clock.now();
    const { ready, checks } = sources.readiness.evaluate();
    // The store's counts are of every replica; while it cannot be read, this process's own.
    const since = dayStartInZone(now, sources.timezone);
    const counted = read(sources.store.history.tallies('webhook', since))
      .then((stored) => (stored ? webhooksToday([...stored, ...(sources.intakeCounts?.unflushed() ?? [])], since) : tally.today(now)));
    const [today, poll, quarantined, connectors, dead, webhooks, replicas] = await Promise.all([
      counted,
      sources.poll.status(read),
      read(sources.webhooks.operator.listQuarantine()).then((q) => q?.length ?? 0),
      read(sources.outbox.connectors()).then((c) => c ?? []),
      read(sources.outbox.list({ state: 'dead', limit: 50 })).then((d) => d ?? []),
      registrations(sources, read),
      read(replicaViews(sources.store, now)).then((r) => r ?? []),
    ]);
    return {
      generatedAt: new Date(now).toISOString(),
      timeZone: sources.timezone,
      ready,
      readiness: checks,
      ...poll,
      webhooks,
      replicas,
      events: { receivedToday: today.received, rejectedToday: today.rejected, quarantined },
      connectors: connectors.map((c) => ({
        name: c.name,
        type: c.type,
        streams: c.streams,
        queueDepth: c.depth,
        dead: c.dead,
        check: c.check.ok ? 'ok' : publicText(c.check.reason),
      })),
      dead: dead.map((entry) => ({
        id: entry.id,
        connector: entry.connector,
        attempts: entry.attempts,
        // Our error code and the receiver's status only: the full text can echo personal data.
        lastError: publicError(entry.lastError ?? ''),
        ...(entry.lastAttemptAt ? { at: new Date(entry.lastAttemptAt).toISOString() } : {}),
      })),
    };
  };

  http.get('/', async (_request, reply) => {
    const [figures, shell] = await Promise.all([snapshot(), sources.console?.shell() ?? '']);
    return sendPage(reply, renderStatusPage(figures, shell));
  });
  http.get('/status.json', async () => snapshot());
  return { snapshot };
}
