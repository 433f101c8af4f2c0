import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Agent } from 'undici';
import { systemClock } from '../clock.js';
import type { Config } from '../config/index.js';
import { createPoller, type CycleResult, type OutboxPort } from '../poll/index.js';
import { holderName, openStore, type InboxStore, type LockInfo, type OutboxStore } from '../store/index.js';
import { openStoreReader } from '../store/sqlite/reader.js';
import { DATABASE_FILE } from '../store/sqlite/sqlite-store.js';
import { createUpstream } from '../upstream-part.js';
import { CliExit } from './errors.js';
import { rethrowExplained } from './explain.js';

/**
 * Read-only commands beside a daemon that holds the embedded store, with no admin token: they read
 * the database file (read-only, beside the writer) and talk to the daemon's own sandbox, whose
 * address its holder file gives. Nothing here writes the store or delivers.
 */
export interface ReadableStore {
  inbox: Pick<InboxStore, 'quarantined'>;
  outbox: Pick<OutboxStore, 'list' | 'ranges'>;
}

/**
 * The store as a read-only command reads it: beside the daemon that holds it, or opened for the
 * command, which logs to `log` (a database that does not answer yet is waited for, and said so).
 */
export async function withReadableStore<T>(config: Config, holder: LockInfo | undefined, log: Logger, work: (store: ReadableStore) => Promise<T>): Promise<T> {
  if (holder) {
    const reader = openStoreReader(config.store.dir);
    try {
      return await work(reader);
    } finally {
      reader.close();
    }
  }
  if (config.store.driver === 'sqlite') mayRead(config.store.dir);
  // Reading a store that is not there would make an empty one and report nothing found: a wrong
  // store.dir, or a relative one from another directory, would look like an idle daemon.
  if (config.store.driver === 'sqlite' && !existsSync(path.join(config.store.dir, DATABASE_FILE)) && !takenByOther(config.store.dir)) {
    throw new CliExit(1, `no store in ${path.resolve(config.store.dir)} (store.dir): nothing has run with this config there yet; is store.dir right, and relative to this directory?`);
  }
  const store = openStore(config.store, log.child({ component: 'store' }), { mode: 'oneshot' });
  await store.start().catch(rethrowExplained(config));
  try {
    return await work(store);
  } finally {
    await store.stop();
  }
}

/**
 * A store directory this user may not look into cannot say whether a store is there: that is said,
 * not "no store" (nor the system's EACCES on a path).
 */
function mayRead(dir: string): void {
  const refused = (error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') return;
    const who = typeof process.getuid === 'function' ? ` (user ${process.getuid()})` : '';
    throw new CliExit(1, `store.dir: cannot read ${path.resolve(dir)}: permission denied${who}; run the command as the user the daemon runs as, or make the directory readable to this one`);
  };
  let isDirectory: boolean | undefined;
  try {
    // A directory above it this user may not search refuses the look itself.
    isDirectory = statSync(dir, { throwIfNoEntry: false })?.isDirectory();
  } catch (error) {
    refused(error);
    return;
  }
  // A file in its place is named as such when the store is opened.
  if (!isDirectory) return;
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
  } catch (error) {
    refused(error);
  }
}

/** Whether something that is not a directory takes the path (opening the store names that). */
function takenByOther(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false;
}

/** The daemon's sandbox, when the upstream is the embedded one; it must have said where it answers. */
export function daemonSandbox(config: Config, holder: LockInfo | undefined): string | undefined {
  if (!holder || config.upstream.baseUrl !== 'sandbox') return undefined;
  if (holder.sandboxUrl) return holder.sandboxUrl;
  if (holder.pid === 0) throw new CliExit(1, `${holderName(holder)} holds ${config.store.dir}: where its sandbox answers is not known`);
  throw new CliExit(1, `${holderName(holder)} holding ${config.store.dir} does not say where its sandbox answers; stop it and start it again with this version`);
}

/** A dry run's outbox: it commits nothing, so nothing is enqueued or woken. */
const NOTHING_DELIVERED: OutboxPort = {
  subscribers: () => [],
  enqueue: async () => 0,
  notify: () => {},
  holdDeliveries: () => () => {},
};

/** `sync --dry-run` beside the daemon: the upstream (its sandbox) against the snapshot it keeps. */
export async function dryRunBesideDaemon(config: Config, holder: LockInfo, log: Logger): Promise<CycleResult> {
  const sandboxUrl = daemonSandbox(config, holder);
  const reader = openStoreReader(config.store.dir);
  const dispatcher = new Agent({ connect: { timeout: config.upstream.connectTimeoutMs } });
  try {
    const { upstream } = await createUpstream(config, { clock: systemClock, dispatcher, log, mode: 'oneshot', sandboxUrl });
    const poller = createPoller({
      store: reader, upstream, outbox: NOTHING_DELIVERED, poll: config.poll, log: log.child({ component: 'poll' }), metrics: new Registry(),
    });
    await poller.start();
    try {
      return await poller.runCycle({ dryRun: true, trigger: 'cli' });
    } finally {
      await poller.stop();
    }
  } finally {
    reader.close();
    await dispatcher.close().catch(() => {});
  }
}
