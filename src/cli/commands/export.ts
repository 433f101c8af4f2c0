import type { Command } from 'commander';
import { notSentWhy, type ExportResult } from '../../poll/index.js';
import { awaitDeliveries, runOneShot } from '../context.js';
import { CliExit } from '../errors.js';
import { withProgress } from '../progress.js';

export function registerExportCommand(program: Command): void {
  const group = program.command('export').description('exports to the connectors subscribed to their stream');
  group
    .command('roster')
    .description('full roster export now: a fresh poll, then one roster record to every connector subscribed to "roster"')
    .option('--json', 'print a machine-readable summary')
    .action(async (options: { json?: boolean }, command: Command) => {
      const result = await runOneShot(
        command,
        (app) =>
          withProgress(
            'export roster',
            () => (app.poll.poller.busy() ? 'fetching the roster…' : `delivering: ${app.outbox.deliveredCount()} delivered`),
            async () => {
              const exported = await app.poll.exportRoster({ trigger: 'cli' });
              if (exported.outcome !== 'ok') return { ...exported, pendingDeliveries: 0 };
              return { ...exported, pendingDeliveries: await awaitDeliveries(app) };
            },
          ),
        async (call) => (await call('/admin/export', {})) as ExportResult,
      );
      const { cycle: _cycle, ...summary } = result;
      if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else if (result.outcome === 'ok') {
        const what = notSentWhy(result) ?? 'enqueued for delivery';
        process.stdout.write(`roster ${result.date}: ${result.rows} students, ${what} (${result.id})\n`);
      }
      if (result.outcome !== 'ok') throw new CliExit(1, `export roster failed: ${result.message ?? result.reason ?? 'unknown reason'}`);
    });
}
