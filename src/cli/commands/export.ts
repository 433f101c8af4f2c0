import type { Command } from 'commander';
import { notSentWhy, type ExportResult } from '../../poll/index.js';
import { awaitDeliveries, runOneShot } from '../context.js';
import { CliExit } from '../errors.js';
import { deliveryId } from '../../store/index.js';
import { withProgress } from '../progress.js';

/** An export as the command reports it: in-process, with what of it was not delivered before the command ends. */
type Exported = ExportResult & { pendingDeliveries?: number; notDelivered?: { id: string; connector: string; status: string; error?: string }[] };

/** What became of a roster delivery that did not go out, and what to do about it. */
function owedText(d: { id: string; connector: string; status: string; error?: string }): string {
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
              const roster = await Promise.all(app.outbox.subscribers('roster').map((connector) => app.outbox.get(deliveryId(connector, exported.id!))));
              const notDelivered = roster.filter((d) => d !== undefined).map((d) => ({ id: d.id, connector: d.connector, status: d.status, ...(d.lastError ? { error: d.lastError } : {}) }));
              return { ...exported, pendingDeliveries, ...(notDelivered.length > 0 ? { notDelivered } : {}) };
            },
          ),
        async (call) => (await call('/admin/export', {})) as ExportResult,
      );
      const { cycle: _cycle, ...summary } = result;
      if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else if (result.outcome === 'ok') {
        // In-process the command waited for the roster's deliveries; a daemon asked delivers it itself.
        const owed = result.notDelivered ? `not delivered to ${result.notDelivered.map((d) => d.connector).join(', ')}` : undefined;
        const what = [notSentWhy(result), owed].filter(Boolean).join('; ') || (result.pendingDeliveries !== undefined ? 'delivered' : 'enqueued for delivery');
        process.stdout.write(`roster ${result.date}: ${result.rows} students, ${what} (${result.id})\n`);
      }
      if (result.outcome !== 'ok') throw new CliExit(1, `export roster failed: ${result.message ?? result.reason ?? 'unknown reason'}`);
      if (result.notDelivered) throw new CliExit(1, `the roster was not delivered to: ${result.notDelivered.map(owedText).join('; ')}`);
      // Exported, but to no one: a script that runs it for the roster must learn that none was sent.
      if (result.notSent === 'no_connector') throw new CliExit(1, 'the roster went nowhere: no connector takes the roster stream (add roster to a connector\'s streams)');
    });
}
