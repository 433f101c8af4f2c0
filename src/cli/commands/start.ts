import type { Command } from 'commander';
import type { Logger } from 'pino';
import { createApp, type App } from '../../app.js';
import { configWarnings } from '../../config/index.js';
import { createDeliveryReport } from '../../outbox/delivery-report.js';
import { cliLogger, globalOptions, loadCliConfig } from '../context.js';
import { checkStoreDir, explainFsError } from '../explain.js';
import { releaseEarly, STOP_SIGNALS } from '../early-signals.mjs';

/** How long SIGTERM may take before we exit anyway (README "Commands": ≤ 10 s). */
const STOP_DEADLINE_MS = 9_500;
/** How soon the same signal again counts as the first one passed on (by npm), not as a second. */
export const SAME_SIGNAL_MS = 1_000;

/** Whether `signal` at `now` is the first signal again, passed on by a parent, rather than a second one. */
export function isEcho(first: { signal: NodeJS.Signals; at: number }, signal: NodeJS.Signals, now: number): boolean {
  return signal === first.signal && now - first.at < SAME_SIGNAL_MS;
}

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the daemon: HTTP server, webhook reconcile, scheduled poll and export, delivery workers')
    .action(async (_options: unknown, command: Command) => {
      const globals = globalOptions(command);
      const loaded = loadCliConfig(globals);
      const log = cliLogger(loaded, globals);
      for (const warning of configWarnings(loaded.config)) log.warn({ config: loaded.file }, warning);
      await checkStoreDir(loaded.config);
      // The handlers go in before anything starts: the server listens during app.start(), and a
      // SIGTERM then (docker stop, npm passing it on) must stop the daemon cleanly, not kill it.
      const stop = stopSignal(log);
      let app: App;
      let stopped: Promise<void>;
      try {
        app = await createApp({ config: loaded.config, log, mode: 'daemon' });
        // A signal during the start ends it (lifecycle.ts): nothing more starts, no poll runs and
        // no webhook is registered upstream after the operator asked the daemon to stop.
        stopped = stop.signalled.then(() => app.stop());
        if (!stop.received()) await app.start();
      } catch (error) {
        stop.dispose();
        throw explainFsError(error, loaded.config);
      }
      let deliveries: { stop(): void } | undefined;
      if (!stop.received()) {
        deliveries = createDeliveryReport({ outbox: app.outbox, log: log.child({ component: 'outbox' }) });
        const adminUrl = app.server?.url;
        if (adminUrl) await app.store.advertise(adminUrl, app.sandbox?.url);
        // A signal while the URL was advertised (the store busy with the start-up poll) comes first.
        if (!stop.received()) log.info({ config: loaded.file, url: adminUrl, callbackUrl: app.callbackUrl() }, `schoolbridge is running: status page ${adminUrl}/`);
      }

      try {
        await stopped;
        deliveries?.stop();
        log.info('stopped');
      } catch (error) {
        log.error({ err: error }, 'stop failed');
      }
    });
}

/**
 * `signalled` resolves at the first SIGTERM or SIGINT (`received()` says so at once), and from then
 * on the stop is bounded: a second signal, or STOP_DEADLINE_MS, exits at once with 1. The same
 * signal again within SAME_SIGNAL_MS is not a second one: one Ctrl-C on `npm start` reaches the
 * daemon from the terminal and, milliseconds later, passed on by npm. `dispose` gives the signals
 * back to Node.js (a start that failed must not outlive them). The signals are those the early
 * handlers (early-signals.mjs) take until these are in.
 */

function stopSignal(log: Logger): { signalled: Promise<NodeJS.Signals>; received(): boolean; dispose(): void } {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  let resolve!: (signal: NodeJS.Signals) => void;
  const signalled = new Promise<NodeJS.Signals>((done) => (resolve = done));
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      if (isEcho(first, signal, Date.now())) return;
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    first = { signal, at: Date.now() };
    log.info({ signal }, 'stopping');
    const deadline = setTimeout(() => {
      log.error('stop took too long; exiting');
      process.exit(1);
    }, STOP_DEADLINE_MS);
    deadline.unref();
    resolve(signal);
  };
  // SIGHUP too: the terminal a daemon was started from closed. Node.js would end it at once.
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  // Until now a signal ended the start at once (early-signals.mjs); from now on it stops the daemon.
  releaseEarly();
  return {
    signalled,
    received: () => first !== undefined,
    dispose() {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}
