import type { Command } from 'commander';
import { POLLED_STREAM_NAMES } from '../../streams/index.js';
import type { ResyncProgress, ResyncResult } from '../../resync.js';
import { awaitDeliveries, runOneShot } from '../context.js';
import { withProgress } from '../progress.js';

/**
 * `schoolbridge resync --connector NAME [--stream S]…`: the current snapshot to one connector
 * (src/resync.ts). In-process it delivers before it exits, like `sync`; beside a daemon holding the
 * embedded store it asks the daemon (admin API), which delivers.
 */
interface ResyncOptions {
  connector: string;
  stream?: string[];
  json?: boolean;
}

export function registerResyncCommand(program: Command): void {
  program
    .command('resync')
    .description('deliver the current snapshot (every record of the polled streams as it is now) to one connector: for a connector or Sheets tab added later, or a receiver that lost its data')
    .requiredOption('--connector <name>', 'the connector to send to (its name in the config)')
    .option('--stream <stream>', `a polled stream (${POLLED_STREAM_NAMES.join(', ')}); repeat for several (default: those the connector takes)`, (value: string, all: string[] = []) => [...all, value])
    .option('--json', 'print a machine-readable summary')
    .addHelpText('after', `
The records are "created" changes whose ids follow the state (<stream>:<key>:<chain of the key's last
change>): a connector that holds that state already changes nothing, and a second resync sends the
same ids. Records no longer in the upstream are not sent.`)
    .action(async (options: ResyncOptions, command: Command) => {
      const request = { connector: options.connector, streams: options.stream ?? [] };
      let progress: ResyncProgress | undefined;
      const result = await runOneShot(
        command,
        (app) =>
          withProgress(
            `resync ${options.connector}`,
            () => (progress ? `${progress.stream}: ${progress.read} of ${progress.total} read, ${progress.enqueued} enqueued; ${app.outbox.deliveredCount()} delivered` : 'reading the snapshot…'),
            async () => {
              const done = await app.resync(request, (p) => (progress = p));
              return { ...done, pendingDeliveries: await awaitDeliveries(app) };
            },
          ),
        async (call) => (await call('/admin/resync', request)) as ResyncResult,
      );
      print(result, options.json === true);
    });
}

function print(result: ResyncResult & { pendingDeliveries?: number }, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    for (const [stream, counts] of Object.entries(result.streams)) {
      const queued = counts.records - counts.enqueued;
      process.stdout.write(`${stream}: ${counts.records} records, ${counts.enqueued} enqueued for ${result.connector}${queued > 0 ? ` (${queued} were queued for it already)` : ''}\n`);
    }
    if (result.pendingDeliveries) process.stdout.write(`${result.pendingDeliveries} deliveries still queued (retried by the next run or the daemon)\n`);
  }
}
