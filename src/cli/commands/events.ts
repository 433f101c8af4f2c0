import type { Command } from 'commander';
import type { App } from '../../app.js';
import { summarizeQuarantine, type QuarantineSummary, type ReleaseResult, type ReprocessResult } from '../../webhooks/index.js';
import { withReadableStore } from '../beside-daemon.js';
import { CliExit } from '../errors.js';
import { awaitDeliveries, callAdmin, cliLogger, embeddedHolder, globalOptions, loadCliConfig, runOneShot } from '../context.js';

/**
 * `schoolbridge events quarantine [list|release <id>]` and `events reprocess <id>` (README "Commands").
 * They change the store, so they run in-process and deliver what they emit before exiting, or ask
 * the daemon holding the store through its admin API:
 *   POST /admin/events/quarantine          {}      → { items: QuarantineSummary[] }
 *   POST /admin/events/quarantine/release  { id }  → ReleaseResult
 *   POST /admin/events/reprocess           { id }  → ReprocessResult
 */
export function registerEventsCommand(program: Command): void {
  const events = program.command('events').description('webhook events held in quarantine, or to re-emit');

  events
    .command('quarantine [action] [id]')
    .description('correctly signed deliveries whose timestamp was outside webhooks.toleranceSeconds (answered 401, never delivered automatically). action: list (default) | release <id>')
    .option('--json', 'print JSON')
    .action((action: string | undefined, id: string | undefined, options: { json?: boolean }, command: Command) => {
      if (action === undefined || action === 'list') return list(command, options.json === true);
      if (action === 'release') {
        if (!id) throw new CliExit(1, 'events quarantine release needs an id (see `schoolbridge events quarantine list`)');
        return release(command, id, options.json === true);
      }
      throw new CliExit(1, `unknown action "${action}": use \`events quarantine list\` or \`events quarantine release <id>\``);
    });

  events
    .command('reprocess <id>')
    .description('re-emit a stored event on purpose, bypassing dedupe: its records get new ids ending in :r1, :r2, …; <id> is an event id or a record id (events:… / invoices:…)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const result = await runOneShot<ReprocessResult>(
        command,
        (app) => deliverAfter(app, () => app.webhooks.operator.reprocess(id)),
        (call) => call('/admin/events/reprocess', { id }) as Promise<ReprocessResult>,
      );
      print(options.json ? JSON.stringify(result, null, 2) : `re-emitted ${result.id} as ${result.recordIds.join(', ')}`);
    });
}

/** Read-only: from the daemon with an admin token, else read from the store (beside the daemon holding it). */
async function list(command: Command, json: boolean): Promise<void> {
  const globals = globalOptions(command);
  const loaded = loadCliConfig(globals);
  const { config } = loaded;
  const holder = await embeddedHolder(config);
  const token = config.server.adminToken;
  const items =
    holder?.adminUrl && token
      ? ((await callAdmin(holder, token, '/admin/events/quarantine', {})) as { items: QuarantineSummary[] }).items
      : await withReadableStore(config, holder, cliLogger(loaded, { ...globals, quiet: true }), async (store) => (await store.inbox.quarantined()).map(summarizeQuarantine));
  if (json) return print(JSON.stringify(items, null, 2));
  if (items.length === 0) return print('quarantine is empty');
  print(items.map((q) => `${q.id}  ${q.reason}  signed ${q.signedAt}  received ${q.receivedAt}  ${q.bytes} bytes`).join('\n'));
}

async function release(command: Command, id: string, json: boolean): Promise<void> {
  const result = await runOneShot<ReleaseResult>(
    command,
    (app) => deliverAfter(app, () => app.webhooks.operator.release(id)),
    (call) => call('/admin/events/quarantine/release', { id }) as Promise<ReleaseResult>,
  );
  if (json) return print(JSON.stringify(result, null, 2));
  print(result.outcome === 'released' ? `released ${result.id} as ${result.recordIds.join(', ')}` : `${result.id} was already stored: removed from quarantine, nothing re-emitted`);
}

/** One-shot commands deliver what they produce before they exit (README, "Commands"). */
async function deliverAfter<T>(app: App, work: () => Promise<T>): Promise<T> {
  const result = await work();
  await awaitDeliveries(app);
  return result;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}
