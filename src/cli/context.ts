import type { Command } from 'commander';
import { createApp, type App } from '../app.js';
import { loadConfig, type Config, type LoadedConfig } from '../config/index.js';
import { createLogger, type Logger } from '../log.js';
import { holderName, liveHolder, type LockInfo } from '../store/index.js';
import { CliExit } from './errors.js';
import { checkStoreDir, rethrowExplained } from './explain.js';

export interface GlobalOptions {
  config?: string;
  verbose?: boolean;
}

export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

export function loadCliConfig(options: GlobalOptions): LoadedConfig {
  return loadConfig(options.config);
}

/** Logs go to stderr: JSON, or readable lines on a terminal. One-shot commands log warnings only. */
export function cliLogger(loaded: LoadedConfig, options: GlobalOptions & { quiet?: boolean }): Logger {
  const configured = loaded.config.log.level;
  const level = options.verbose ? 'debug' : options.quiet && configured === 'info' ? 'warn' : configured;
  return createLogger({ level, pretty: loaded.config.log.pretty ?? process.stderr.isTTY === true });
}

/** How a one-shot command asks a running daemon to do its work (README "Commands"). */
export async function callAdmin(holder: LockInfo, token: string, path: string, body: unknown = {}): Promise<unknown> {
  if (!holder.adminUrl) throw new CliExit(1, `${holderName(holder)} holds the store but has no admin API address`);
  const response = await fetch(`${holder.adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  // The daemon's /admin routes exist only with its server.adminToken set, and take only that token.
  const routeMissing = response.status === 404 && /^Route (POST|GET):/.test(answerText(text));
  if (routeMissing) {
    throw new CliExit(1, `${holderName(holder)} holds the store and runs without server.adminToken, so its admin API is off: give it this config's server.adminToken (and restart it), or stop it and run the command again`);
  }
  if (response.status === 401) {
    throw new CliExit(1, `${holderName(holder)} holds the store and refused this config's server.adminToken: give both the same token, or stop it and run the command again`);
  }
  if (!response.ok) {
    // An action that reports its outcome (a poll cycle, an export) answers its failure with the
    // report: the command prints it and exits as it would in-process.
    const report = reportOf(text);
    if (report) return report;
    throw new CliExit(1, `the daemon answered ${response.status} to ${path}: ${answerText(text)}`);
  }
  return text ? JSON.parse(text) : {};
}

/** An admin answer that is an action's report (it has an `outcome`), if it is one. */
function reportOf(text: string): { outcome: string } | undefined {
  try {
    // `error` is the code the admin API puts first; the report has it as `reason` already.
    const { error: _code, ...body } = JSON.parse(text) as { outcome?: unknown; error?: unknown };
    return typeof body.outcome === 'string' ? (body as { outcome: string }) : undefined;
  } catch {
    return undefined;
  }
}

/** What an admin route's error answer says (`{"error":"…"}` or `{"error":code,"message":"…"}`), not its JSON. */
export function answerText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.message === 'string') return body.message;
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not JSON: shown as it came.
  }
  return text.slice(0, 300);
}

/**
 * The daemon holding an embedded store, when one does: then a one-shot command asks it rather than
 * write the store itself. On PostgreSQL the database arbitrates, so commands always run in-process.
 */
export async function embeddedHolder(config: Config): Promise<LockInfo | undefined> {
  return config.store.driver === 'sqlite' ? liveHolder(config.store.dir) : undefined;
}

/**
 * Runs a state-changing one-shot command in-process, or, when a daemon already holds the embedded
 * store, asks it through its admin API (`viaAdmin`) — two processes never write one SQLite store.
 */
export async function runOneShot<T>(
  command: Command,
  work: (app: App) => Promise<T>,
  viaAdmin?: (call: (path: string, body?: unknown) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const globals = globalOptions(command);
  const loaded = loadCliConfig(globals);
  const { config } = loaded;
  const holder = await embeddedHolder(config);
  if (holder) {
    const token = config.server.adminToken;
    if (!viaAdmin || !token) {
      throw new CliExit(
        1,
        `${holderName(holder)} holds the store ${config.store.dir}; ` +
          (viaAdmin ? 'set server.adminToken so this command can ask it, or stop the daemon first' : 'stop it first'),
      );
    }
    return viaAdmin((path, body) => callAdmin(holder, token, path, body));
  }
  // The store's directory made and proved writable first, as `start` does: else SQLite's
  // "unable to open database file", or a bare ENOENT of a mkdir, would be all the command says.
  await checkStoreDir(config);
  const log = cliLogger(loaded, { ...globals, quiet: true });
  // A directory of the config that cannot be made or written is named by its key.
  const explained = rethrowExplained(config);
  const app = await createApp({ config, log, mode: 'oneshot' }).catch(explained);
  try {
    await app.start().catch(explained);
    return await work(app);
  } finally {
    await app.stop();
    log.flush?.();
  }
}

/** How long a one-shot command waits for its deliveries before it exits anyway (they stay queued). */
export const DELIVERY_WAIT_MS = 120_000;

/** How often a command beside replicas looks whether they have delivered what it produced. */
const REPLICA_LOOK_MS = 250;

/**
 * Waits, bounded, until the outbox has nothing due (a first cycle's created changes included);
 * returns how many deliveries are still queued. Beside replicas (a shared store) a connector one of
 * them serves is delivered there: then it also waits until no delivery is due or in flight anywhere.
 */
export async function awaitDeliveries(app: App, limitMs = DELIVERY_WAIT_MS): Promise<number> {
  const deadline = Date.now() + limitMs;
  let timer: NodeJS.Timeout | undefined;
  const settled = app.outbox.whenIdle();
  settled.catch(() => {}); // past the limit the command stops the app, and with it the outbox
  await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)))]);
  clearTimeout(timer);
  if (app.store.shared) {
    while (Date.now() < deadline && (await deliveringElsewhere(app))) await new Promise((resolve) => setTimeout(resolve, REPLICA_LOOK_MS));
  }
  let queued = 0;
  for (const c of (await app.outbox.counts()).values()) queued += c.depth;
  return queued;
}

/**
 * Whether a delivery is due or in flight. Due is read first: a due delivery leaves that state only
 * by being claimed, so one not seen due was in flight or finished, and the read of those in flight
 * after it sees the one still going. Read the other way round, a replica's claim between the two
 * reads hid a delivery from both (not yet in flight, then no longer due while its lease runs).
 */
async function deliveringElsewhere(app: App): Promise<boolean> {
  const now = Date.now();
  const due = await Promise.all(app.config.connectors.map((c) => app.store.outbox.nextRunAt(c.name)));
  if (due.some((at) => at !== undefined && at <= now)) return true;
  return (await app.outbox.list({ state: 'active', limit: 1 })).length > 0;
}
