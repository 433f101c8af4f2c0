import type { Command } from 'commander';
import { Agent } from 'undici';
import { systemClock } from '../clock.js';
import { openStore } from '../store/index.js';
import { createUpstream } from '../upstream-part.js';
import type { UpstreamClient } from '../upstream/index.js';
import { createReconciler, type Reconciler } from '../webhooks/reconciler.js';
import { daemonSandbox } from './beside-daemon.js';
import { rethrowExplained } from './explain.js';
import { cliLogger, embeddedHolder, globalOptions, loadCliConfig } from './context.js';

/**
 * What the `webhooks …` commands need: the upstream (with the embedded sandbox when configured). On
 * PostgreSQL also the store, where a reconcile takes its turn among the replicas; an embedded store
 * belongs to its daemon, so there the commands talk to the upstream only.
 */
export interface UpstreamContext {
  upstream: UpstreamClient;
  reconciler: Reconciler;
  /** The URL the upstream calls us at (server.publicUrl, else http://host:port) + /webhooks/v2. */
  callbackUrl(): string;
}

export async function withUpstream<T>(command: Command, work: (context: UpstreamContext) => Promise<T>): Promise<T> {
  const globals = globalOptions(command);
  const loaded = loadCliConfig(globals);
  const { config } = loaded;
  const log = cliLogger(loaded, { ...globals, quiet: true });
  // Beside a daemon on the embedded default: its sandbox (the school it registered with), and its URL.
  const holder = await embeddedHolder(config);
  const sandboxUrl = daemonSandbox(config, holder);
  const dispatcher = new Agent({ connect: { timeout: config.upstream.connectTimeoutMs } });
  // The embedded sandbox keeps its school in store.dir: a directory that cannot be made is named by its key.
  const { sandbox, upstream } = await createUpstream(config, { clock: systemClock, dispatcher, log, mode: 'oneshot', sandboxUrl }).catch(rethrowExplained(config));
  const base = config.server.publicUrl ?? holder?.adminUrl ?? `http://${config.server.host}:${config.server.port}`;
  const callbackUrl = () => `${base.replace(/\/+$/, '')}/webhooks/v2`;
  const store = config.store.driver === 'postgres' ? openStore(config.store, log.child({ component: 'store' }), { clock: systemClock, mode: 'oneshot' }) : undefined;
  const reconciler = createReconciler({
    api: upstream,
    wanted: () => ({ events: config.webhooks.events, callbackUrl: callbackUrl(), prune: config.webhooks.prune }),
    clock: systemClock,
    log: log.child({ component: 'webhook-reconciler' }),
    onStart: false,
    ...(store ? { store: { roles: store.roles, state: store.state } } : {}),
  });
  try {
    await store?.start();
    return await work({ upstream, reconciler, callbackUrl });
  } finally {
    await store?.stop();
    await sandbox?.stop();
    await dispatcher.close().catch(() => {});
    log.flush?.();
  }
}
