import type { Command } from 'commander';
import { rosterOwed, type ExportReport, type NotDelivered } from '../../export-report.js';
import { notSentWhy } from '../../poll/index.js';
import { awaitDeliveries, runOneShot } from '../context.js';
import { CliExit } from '../errors.js';
import { withProgress } from '../progress.js';

/**
 * An export as the command reports it, with what of it was not delivered before the command ends:
 * in-process, or as the daemon asked answers once the roster's deliveries have their outcome.
 */
type Exported = ExportReport & { pendingDeliveries?: number };

/** What became of a roster delivery that did not go out, and what to do about it. */
function owedText(d: NotDelivered): string {
  const error = d.error ? ` (${d.error})` : '';
  if (d.status === 'dead') return `${d.connector}, dead${error}: schoolbridge deliveries retry ${d.id}`;
  if (d.status === 'blocked') return `${d.connector}, waiting behind an earlier delivery of the roster (schoolbridge deliveries list)`;
  if (d.status === 'active') return `${d.connector}, still in flight`;
  return `${d.connector}, to be tried again${error}`;
}

export function registerExportCommand(program: Command): void {
  const group = program.command('export').description('exports to the connectors subscribed to their stream');
  group
    .command('roster')
    .description('full roster export now: a fresh poll, then one roster record to every connector subscribed to "roster"')
    .option('--json', 'print a machine-readable summary')
    .action(async (options: { json?: boolean }, command: Command) => {
      const result: Exported = await runOneShot<Exported>(
        command,
        (app) =>
          withProgress(
            'export roster',
            () => (app.poll.poller.busy() ? 'fetching the roster…' : `delivering: ${app.outbox.deliveredCount()} delivered`),
            async () => {
              const exported = await app.poll.exportRoster({ trigger: 'cli' });
              if (exported.outcome !== 'ok') return { ...exported, pendingDeliveries: 0 };
              const pendingDeliveries = await awaitDeliveries(app);
              if (exported.id === undefined) return { ...exported, pendingDeliveries };
              // The roster's own deliveries that did not go out (a connector failing), of this export or of
              // the same roster exported before today: the export did not land.
              const notDelivered = await rosterOwed(app.outbox, exported.id);
              return { ...exported, pendingDeliveries, ...(notDelivered.length > 0 ? { notDelivered } : {}) };
            },
          ),
        // The daemon answers once the roster's deliveries have their outcome (bounded), as here.
        async (call) => (await call('/admin/export', {})) as ExportReport,
      );
      const { cycle: _cycle, ...summary } = result;
      if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else if (result.outcome === 'ok') {
        const owed = result.notDelivered ? `not delivered to ${result.notDelivered.map((d) => d.connector).join(', ')}` : undefined;
        const what = [notSentWhy(result), owed].filter(Boolean).join('; ') || 'delivered';
        process.stdout.write(`roster ${result.date}: ${result.rows} students, ${what} (${result.id})\n`);
      }
      if (result.outcome !== 'ok') throw new CliExit(1, `export roster failed: ${result.message ?? result.reason ?? 'unknown reason'}`);
      if (result.notDelivered) throw new CliExit(1, `the roster was not delivered to: ${result.notDelivered.map(owedText).join('; ')}`);
      // Exported, but to no one: a script that runs it for the roster must learn that none was sent.
      if (result.notSent === 'no_connector') throw new CliExit(1, 'the roster went nowhere: no connector takes the roster stream (add roster to a connector\'s streams)');
    });
}
