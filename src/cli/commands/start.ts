import type { Command } from 'commander';
import { createApp } from '../../app.js';
import { createDeliveryReport } from '../../outbox/delivery-report.js';
import { cliLogger, globalOptions, loadCliConfig } from '../context.js';
import { checkStoreDir, explainFsError } from '../explain.js';

/** How long SIGTERM may take before we exit anyway (CONTRACT §1: ≤ 10 s). */
const STOP_DEADLINE_MS = 9_500;

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the daemon: HTTP server, webhook reconcile, scheduled poll and export, delivery workers')
    .action(async (_options: unknown, command: Command) => {
      const globals = globalOptions(command);
      const loaded = loadCliConfig(globals);
      const log = cliLogger(loaded, globals);
      await checkStoreDir(loaded.config);
      const app = await createApp({ config: loaded.config, log, mode: 'daemon' });
      try {
        await app.start();
      } catch (error) {
        throw explainFsError(error, loaded.config);
      }
      const deliveries = createDeliveryReport({ outbox: app.outbox, log: log.child({ component: 'outbox' }) });
      const adminUrl = app.server?.url;
      if (adminUrl) await app.store.advertise(adminUrl, app.sandbox?.url);
      log.info({ config: loaded.file, url: adminUrl, callbackUrl: app.callbackUrl() }, `schoolbridge is running: status page ${adminUrl}/`);

      await new Promise<void>((resolve) => {
        let stopping = false;
        const onSignal = (signal: NodeJS.Signals) => {
          if (stopping) {
            log.warn({ signal }, 'second signal: exiting now');
            process.exit(1);
          }
          stopping = true;
          log.info({ signal }, 'stopping');
          const deadline = setTimeout(() => {
            log.error('stop took too long; exiting');
            process.exit(1);
          }, STOP_DEADLINE_MS);
          deadline.unref();
          app.stop().then(
            () => {
              deliveries.stop();
              log.info('stopped');
              resolve();
            },
            (error: unknown) => {
              log.error({ err: error }, 'stop failed');
              resolve();
            },
          );
        };
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
      });
    });
}
