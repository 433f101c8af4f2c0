import type { Command } from 'commander';
import type { CycleResult } from '../../poll/index.js';
import { cycleJson, formatChange, formatCycle } from '../../poll/format.js';
import { dryRunCycle } from '../../poll/dry-run.js';
import { dryRunBesideDaemon } from '../beside-daemon.js';
import { awaitDeliveries, callAdmin, cliLogger, embeddedHolder, globalOptions, loadCliConfig, runOneShot } from '../context.js';
import { CliExit } from '../errors.js';
import { withProgress } from '../progress.js';

interface SyncOptions {
  dryRun?: boolean;
  json?: boolean;
}

export function registerSyncCommand(program: Command): void {
  program
    .command('sync')
    .description('one poll cycle now: fetch students and users, diff them against the snapshot, deliver the changes')
    .option('--dry-run', 'print the changes; write and deliver nothing')
    .option('--json', 'print a machine-readable summary (with --dry-run: the changes too)')
    .addHelpText('after', '\nExit code 0 when the cycle succeeded, 1 when it failed or was aborted (e.g. the mass-delete guard).')
    .action(async (options: SyncOptions, command: Command) => {
      const result = options.dryRun ? await dryRun(command) : await realRun(command);
      print(result, options);
      if (result.outcome !== 'ok') throw new CliExit(1, `sync ${result.outcome}: ${result.message ?? result.reason ?? 'unknown reason'}`);
    });
}

async function realRun(command: Command): Promise<CycleResult & { pendingDeliveries?: number }> {
  return runOneShot(
    command,
    (app) =>
      withProgress(
        'sync',
        () => (app.poll.poller.busy() ? 'fetching and diffing students and users…' : `delivering: ${app.outbox.deliveredCount()} delivered`),
        async () => {
          const result = await app.poll.sync({ trigger: 'cli' });
          return { ...result, pendingDeliveries: await awaitDeliveries(app) };
        },
      ),
    async (call) => (await call('/admin/sync', {})) as CycleResult,
  );
}

/**
 * A dry run reads the real snapshot and commits nothing: beside a daemon holding the embedded store,
 * it asks the daemon when there is an admin token, and otherwise reads the store beside it.
 */
async function dryRun(command: Command): Promise<CycleResult> {
  const globals = globalOptions(command);
  const loaded = loadCliConfig(globals);
  const { config } = loaded;
  const holder = await embeddedHolder(config);
  if (holder) {
    const token = config.server.adminToken;
    if (!token) return dryRunBesideDaemon(config, holder, cliLogger(loaded, { ...globals, quiet: true }));
    const answer = (await callAdmin(holder, token, '/admin/sync', { dryRun: true })) as CycleResult;
    if (answer.dryRun !== true) throw new CliExit(1, 'the daemon does not support dry runs and ran a real cycle');
    return answer;
  }
  return runOneShot(command, (app) => dryRunCycle(app));
}

function print(result: CycleResult & { pendingDeliveries?: number }, options: SyncOptions): void {
  if (options.json) {
    // Piece by piece (cycleJson), gathered into writes of ~64 KB.
    let text = '';
    for (const piece of cycleJson(result)) {
      text += piece;
      if (text.length < 1 << 16) continue;
      process.stdout.write(text);
      text = '';
    }
    process.stdout.write(text);
    return;
  }
  for (const change of result.changes ?? []) process.stdout.write(`${formatChange(change)}\n`);
  process.stdout.write(`${formatCycle(result)}\n`);
  if (result.pendingDeliveries) process.stdout.write(`${result.pendingDeliveries} deliveries still queued (retried by the next run or the daemon)\n`);
}
