import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Agent, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/index.js';
import { createUserDirectory } from './connectors/user-directory.js';
import { registerConsoleRoutes } from './console/routes.js';
import { createHistoryUpkeep, type HistoryUpkeep } from './history/upkeep.js';
import { createHourlyCounts, type HourlyCounts } from './history/hourly-counts.js';
import { adminBodies } from './http/admin-bodies.js';
import { outcomeReply, registerAdminRoutes, withBody } from './http/admin-routes.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { applyConnectionCap, fastifyServerOptions, refuseLargeBeforeContinue } from './http/server-limits.js';
import { liveness } from './http/liveness.js';
import { createLifecycle, type Component } from './lifecycle.js';
import { createMetricsRegistry } from './metrics.js';
import { createThreadHeaps } from './thread-heap.js';
import { adminList, adminRetry, createConnectorInstances, createOutbox, LIST_USAGE, listBody, RETRY_USAGE, retryBody, RETRY_WAIT_MS, type Outbox } from './outbox/index.js';
import { exportAndReport } from './export-report.js';
import { notAnswering } from './store/heartbeat.js';
import { createPollPart, type PollPart } from './poll/index.js';
import { createReadiness, type Readiness } from './readiness.js';
import { resync, type ResyncProgress, type ResyncRequest, type ResyncResult } from './resync.js';
import type { Sandbox } from '../sandbox/index.js';
import { createServer, type Server } from './server.js';
import { registerReplicaMetrics } from './status/replicas.js';
import { registerStatusRoutes } from './status/status.js';
import { createStoreMetrics, openStore, type Store } from './store/index.js';
import { refuseOldFormat } from './store/old-format.js';
import { createUpstream } from './upstream-part.js';
import { upstreamReadiness, type UpstreamClient } from './upstream/index.js';
import { createIntakeLoad, createWebhooks, type IntakeLoad, type Webhooks } from './webhooks/index.js';

/**
 * Wires the whole daemon: every dependency is built here and passed down; nothing here
 * listens or installs signal handlers (the CLI's `start` does). `mode: 'oneshot'` builds the same
 * parts for a CLI command: no HTTP listener, no schedules, no start-up reconcile.
 */
export interface AppOptions {
  config: Config;
  log: Logger;
  mode: 'daemon' | 'oneshot';
  clock?: Clock;
  dispatcher?: Dispatcher;
  random?: () => number;
  /** The store to use instead of the one `store.driver` names (tests). The app starts and stops it. */
  store?: Store;
}

export interface App extends Component {
  readonly config: Config;
  readonly log: Logger;
  readonly clock: Clock;
  readonly dispatcher: Dispatcher;
  readonly random: () => number;
  readonly metrics: Registry;
  readonly readiness: Readiness;
  readonly store: Store;
  readonly http: FastifyInstance;
  readonly server: Server | undefined;
  readonly sandbox: Sandbox | undefined;
  readonly upstream: UpstreamClient;
  /** Durable delivery to the configured connectors. */
  readonly outbox: Outbox;
  /** Webhook intake, quarantine/reprocess and registration reconcile. */
  readonly webhooks: Webhooks;
  /** Poll and diff, the scheduler, the roster export. */
  readonly poll: PollPart;
  /** The console's background upkeep: history pruning and the snapshot's name index. */
  readonly history: HistoryUpkeep;
  /** The webhook intake's outcomes per hour, kept in memory until flushed to the store. */
  readonly intakeCounts: HourlyCounts;
  /** Webhooks being answered, which the outbox lets go first while many are (outbox/intake-first.ts). */
  readonly intakeLoad: IntakeLoad;
  /** The signing secrets accepted on webhook deliveries: the current one first. */
  readonly webhookSecrets: readonly string[];
  /** The URL upstream calls (publicUrl + /webhooks/v2); known once the server listens. */
  callbackUrl(): string;
  /** Enqueues the current snapshot for one connector (`schoolbridge resync`). */
  resync(request: ResyncRequest, onProgress?: (progress: ResyncProgress) => void): Promise<ResyncResult>;
}

/** How long a connector's worker gathers records after it emptied its queue (WorkerHost.lingerMs). */
const DELIVERY_LINGER_MS = 25;

export async function createApp(options: AppOptions): Promise<App> {
  const { config, log, mode } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const ownsDispatcher = !options.dispatcher;
  const dispatcher =
    options.dispatcher ??
    new Agent({ connect: { timeout: config.upstream.connectTimeoutMs }, keepAliveTimeout: 10_000, connections: 16 });
  const metrics = createMetricsRegistry({ defaultMetrics: mode === 'daemon' });
  const readiness = createReadiness();
  const components: Component[] = [];
  // The worker threads' heaps, which the process metrics leave out (thread-heap.ts).
  if (mode === 'daemon') components.push(createThreadHeaps(metrics));

  // Unknown connector types fail here, before anything has started.
  const connectorInstances = createConnectorInstances(config.connectors);

  // --- store (docs/store.md) ----------------------------------------------------------------------
  const store = options.store ?? openStore(config.store, log.child({ component: 'store' }), { clock, timings: createStoreMetrics(metrics, config.store.driver), mode });
  components.push(store);
  readiness.register('store', () => {
    const health = store.health();
    return health.ok ? { ok: true, detail: store.engine } : { ok: false, reason: health.reason };
  });

  // --- upstream: the embedded sandbox when baseUrl is "sandbox", and the API v2 client -----------
  // Before the embedded sandbox keeps its school in store.dir: a directory of the old format is
  // refused as it was found, with nothing written into it.
  if (config.store.driver === 'sqlite' && !options.store) await refuseOldFormat(config.store.dir);
  const { sandbox, upstream, secrets: webhookSecrets } = await createUpstream(config, { clock, dispatcher, log, mode });
  // First in the list: createUpstream started it already (its URL is the upstream's), so it is
  // stopped last, and also when a start ends before the store has opened.
  if (sandbox) components.unshift({ name: 'sandbox', start: () => sandbox.start(), stop: () => sandbox.stop() });
  readiness.register('upstream', () => upstreamReadiness(upstream.lastContact(), upstream.failingCalls()));

  // --- HTTP ------------------------------------------------------------------------------------------
  const http: FastifyInstance = Fastify({
    // Per-request logs are info-level; at warn the access log stays off and errors still show.
    loggerInstance: log.child({ component: 'http' }, { level: log.level === 'info' ? 'warn' : log.level }) as FastifyBaseLogger,
    bodyLimit: config.webhooks.bodyLimitBytes,
    return503OnClosing: true,
    // Slow or idle clients are cut off and connections capped (README "Security").
    ...fastifyServerOptions(config.server),
  });
  applyConnectionCap(http.server, config.server);
  refuseLargeBeforeContinue(http.server, config.webhooks.bodyLimitBytes);
  registerHealthRoutes(http, { readiness, metrics, liveness: () => liveness(upstream.lastContact()) });
  const server = mode === 'daemon' ? createServer(http, { host: config.server.host, port: config.server.port }) : undefined;
  const callbackUrl = () => {
    const base = config.server.publicUrl ?? server?.url ?? `http://${config.server.host}:${config.server.port}`;
    return `${base.replace(/\/+$/, '')}/webhooks/v2`;
  };

  // --- outbox and connectors ----------------------------------------------------------------
  // Webhooks being answered: while many are, deliveries wait (outbox/intake-first.ts).
  const intakeLoad = createIntakeLoad();
  const outbox = createOutbox({
    store: store.outbox,
    roles: store.roles,
    watch: (listener) => store.watch(listener),
    connectors: connectorInstances,
    delivery: config.delivery,
    clock,
    dispatcher,
    log: log.child({ component: 'outbox' }),
    metrics,
    random,
    // One-shot commands deliver but do not report readiness: no connector checks.
    checkIntervalMs: mode === 'daemon' ? 60_000 : 0,
    // Under a steady stream of webhooks, batches of a few tens of milliseconds' worth.
    lingerMs: DELIVERY_LINGER_MS,
    users: createUserDirectory(store.snapshot),
    leasesStand: (now) => store.leasesStand(now),
    intake: intakeLoad,
  });
  components.push(outbox);
  for (const connector of config.connectors) {
    readiness.register(`connector:${connector.name}`, () => outbox.connectorState(connector.name));
  }

  // --- webhook intake and registration reconcile ---------------------------------------
  // The intake's outcomes per hour, for the console; flushed to the store in the background.
  const intakeCounts = createHourlyCounts({ kind: 'webhook', store: store.history, clock, log: log.child({ component: 'history' }) });
  if (mode === 'daemon') components.push(intakeCounts);
  const webhooks = createWebhooks({
    config: config.webhooks, mode, http, store, sink: outbox, upstream, secrets: webhookSecrets, callbackUrl,
    clock, log, metrics, random, load: intakeLoad, ...(mode === 'daemon' ? { count: (label: string) => intakeCounts.add(label) } : {}),
    // The reconciler needs the server's URL: it waits until the server listens.
    whenListening: async (signal) => {
      if (server) await server.listening(signal);
    },
  });
  components.push(...webhooks.components.filter((part) => part !== webhooks.reconciler));
  readiness.register('webhooks', () => webhooks.reconciler.readiness());

  // --- poll, diff and roster export --------------------------------------------------
  // The poller in every mode; the scheduler (cron + start-up runs) in daemon mode only.
  const poll = createPollPart({ config, mode, store, upstream, outbox, clock, log, metrics, readiness });
  components.push(...poll.components.filter((part) => part !== poll.scheduler));

  const resyncSnapshot: App['resync'] = (request, onProgress) =>
    resync({ connectors: config.connectors, snapshot: store.snapshot, outbox: store.outbox, notify: () => outbox.notify(), clock }, request, onProgress);

  // --- the console's history: pruned, and the snapshot's names indexed, in the background ---------
  const upkeep = createHistoryUpkeep({ store, clock, log: log.child({ component: 'history' }), historyDays: config.delivery.historyDays });
  if (mode === 'daemon') {
    components.push(upkeep);
    poll.poller.on('cycle', (result) => {
      if (result.outcome === 'ok' && !result.dryRun) void upkeep.refreshPeople();
    });
  }

  // --- status page and admin API --------------------------------------------------------
  /** Why the store is not to be waited for: it has answered nothing for a while (heartbeat.ts). */
  const stalled = () => {
    const health = store.health();
    return notAnswering(health) && !health.ok ? health.reason : undefined;
  };
  /** Every admin action and console section reads or writes the store: one that answers nothing would hold it until it is back. */
  const storeRefusal = () => {
    const reason = stalled();
    return reason === undefined ? undefined : { status: 503, body: { error: 'store.unavailable', message: reason } };
  };
  const consoleRoutes = registerConsoleRoutes(http, {
    store, outbox, quarantine: () => webhooks.operator.listQuarantine(), clock, timezone: config.poll.timezone, historyDays: config.delivery.historyDays,
    unready: () => Object.entries(readiness.evaluate().checks).flatMap(([name, state]) => (state.ok || name.startsWith('connector:') ? [] : [{ name, reason: state.reason }])),
    notAnswering: stalled,
  }, { adminToken: config.server.adminToken, consolePublic: config.server.consolePublic, refuse: storeRefusal });
  registerStatusRoutes(http, { readiness, clock, timezone: config.poll.timezone, callbackUrl, outbox, webhooks, poll, store, intakeCounts, console: consoleRoutes });
  if (mode === 'daemon') registerReplicaMetrics(metrics, store, clock);
  registerAdminRoutes(http, config.server.adminToken, {
    '/admin/sync': withBody(adminBodies.dryRun, '{"dryRun"?: true|false}', async ({ dryRun }) => outcomeReply(await poll.sync({ dryRun: dryRun === true, trigger: 'admin' }))),
    '/admin/export': withBody(adminBodies.none, '{}', async () => outcomeReply(await exportAndReport(() => poll.exportRoster({ trigger: 'admin' }), outbox, RETRY_WAIT_MS))),
    '/admin/deliveries/retry': withBody(retryBody, RETRY_USAGE, (body) => adminRetry(outbox, body)),
    '/admin/deliveries/list': withBody(listBody, LIST_USAGE, (body) => adminList(outbox, body)),
    '/admin/events/quarantine': withBody(adminBodies.none, '{}', async () => ({ items: await webhooks.operator.listQuarantine() })),
    '/admin/events/quarantine/release': withBody(adminBodies.id, '{"id":"<quarantined id>"}', ({ id }) => webhooks.operator.release(id)),
    '/admin/events/reprocess': withBody(adminBodies.id, '{"id":"<event id>"}', ({ id }) => webhooks.operator.reprocess(id)),
    '/admin/webhooks/reconcile': withBody(adminBodies.dryRun, '{"dryRun"?: true|false}', ({ dryRun }) => webhooks.reconciler.reconcile({ dryRun: dryRun === true })),
    '/admin/resync': withBody(adminBodies.resync, '{"connector":"<name>","streams"?:["students"|"users"|…]}', (body) => resyncSnapshot({ connector: body.connector, streams: body.streams ?? [] })),
  }, storeRefusal);

  // --- server last: requests arrive only when everything they need has started --------------------
  if (server) components.push(server);
  // The schedules (and their start-up poll and export) only once the server listens: a port in use
  // stops the start before any of them runs.
  if (poll.scheduler) components.push(poll.scheduler);
  // The reconciler registers us upstream once the server listens. Last, so stopped first: a stop
  // aborts its requests before the schedules, the server and the poll take their time to stop.
  components.push(webhooks.reconciler);

  const lifecycle = createLifecycle(components, log);
  return {
    name: 'app',
    config,
    log,
    clock,
    dispatcher,
    random,
    metrics,
    readiness,
    store,
    http,
    server,
    sandbox,
    upstream,
    outbox,
    webhooks,
    poll,
    history: upkeep,
    intakeCounts,
    intakeLoad,
    webhookSecrets,
    callbackUrl,
    resync: resyncSnapshot,
    start: () => lifecycle.start(),
    async stop() {
      await lifecycle.stop();
      if (ownsDispatcher) await dispatcher.close().catch(() => {});
    },
  };
}
