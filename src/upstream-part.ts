import path from 'node:path';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { makeDir } from './files/make-dir.js';
import { sandboxDocument } from './sandbox-document.js';
import { BridgeError } from './errors.js';
import { listenError } from './server.js';
import { createUpstreamClient, type UpstreamClient } from './upstream/index.js';

/** The embedded sandbox's school, kept between runs beside the store (sandbox/document.ts). */
export const SANDBOX_DOCUMENT = 'sandbox.json';

export interface UpstreamDeps {
  clock: Clock;
  dispatcher: Dispatcher;
  log: Logger;
  /** Only the daemon's sandbox lives (activity): a command's would change the school under the daemon's feet. */
  mode?: 'daemon' | 'oneshot';
  /** A sandbox already running (the daemon's, found through the store's holder file) to talk to instead. */
  sandboxUrl?: string | undefined;
}

/**
 * The upstream as the config names it: the API v2 client, and, when `upstream.baseUrl` is
 * "sandbox", the embedded simulated school it talks to (started here: it has to answer before the
 * client is used), kept in `store.dir/sandbox.json` so that a restart continues the same school.
 * Also the signing secrets webhook deliveries are checked with, the current first.
 */
export async function createUpstream(config: Config, deps: UpstreamDeps): Promise<{
  sandbox: Sandbox | undefined;
  upstream: UpstreamClient;
  secrets: string[];
}> {
  const { clock, dispatcher, log } = deps;
  const isSandbox = config.upstream.baseUrl === 'sandbox';
  const clientId = config.upstream.clientId ?? (isSandbox ? 'sandbox-client' : undefined);
  const clientSecret = config.upstream.clientSecret ?? (isSandbox ? 'sandbox-secret' : undefined);
  let sandbox: Sandbox | undefined;
  if (isSandbox && !deps.sandboxUrl) {
    await makeDir(config.store.dir);
    sandbox = createSandbox({
      port: config.sandbox.port,
      students: config.sandbox.students,
      seed: config.sandbox.seed,
      clientId,
      clientSecret,
      retryTimeScale: config.sandbox.retryTimeScale,
      activity: config.sandbox.activity && deps.mode !== 'oneshot' ? { intervalMs: config.sandbox.activityIntervalMs } : false,
      document: sandboxDocument(path.join(config.store.dir, SANDBOX_DOCUMENT)),
      clock,
      log: log.child({ component: 'sandbox' }),
    });
    const embedded = sandbox;
    const file = path.join(config.store.dir, SANDBOX_DOCUMENT);
    await embedded.start().catch((error: unknown) => {
      // The sandbox's own refusal of a saved school names no file: this one is where it keeps it.
      if (error instanceof BridgeError && error.code === 'sandbox.document_unreadable' && !error.message.includes(file)) {
        throw new BridgeError(error.code, `${file}: ${error.message}`, { cause: error });
      }
      throw listenError(error, { host: '127.0.0.1', port: config.sandbox.port }, { code: 'sandbox', port: 'sandbox.port (0: any free port)', host: 'the loopback interface: the embedded sandbox listens on 127.0.0.1' });
    });
  }
  const upstream = createUpstreamClient({
    baseUrl: sandbox ? sandbox.url : isSandbox ? deps.sandboxUrl! : config.upstream.baseUrl,
    auth: config.upstream.token ? { token: config.upstream.token } : { clientId: clientId!, clientSecret: clientSecret! },
    dispatcher,
    clock,
    log: log.child({ component: 'upstream' }),
    timeoutMs: config.upstream.timeoutMs,
    maxListBytes: config.upstream.maxListBytes,
    connectTimeoutMs: config.upstream.connectTimeoutMs,
  });
  const secrets = [clientSecret, ...config.webhooks.previousSecrets].filter((s): s is string => Boolean(s));
  return { sandbox, upstream, secrets };
}
