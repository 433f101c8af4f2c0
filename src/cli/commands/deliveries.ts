import type { Command } from 'commander';
import type { App } from '../../app.js';
import { formatDeliveries, noSuchConnector, owedOfRanges, printable, type OwedRange, RETRY_WAIT_MS, retryAndReport, type RetryReport, type RetryTarget } from '../../outbox/index.js';
import type { DeliveryFilter, ListedDelivery } from '../../store/index.js';
import { isBridgeError } from '../../errors.js';
import { withReadableStore } from '../beside-daemon.js';
import { CliExit } from '../errors.js';
import { callAdmin, cliLogger, embeddedHolder, globalOptions, loadCliConfig, runOneShot } from '../context.js';

interface ListOptions {
  state?: string;
  connector?: string;
  json?: boolean;
}

interface RetryOptions {
  allDead?: boolean;
  connector?: string;
  json?: boolean;
}

export function registerDeliveriesCommand(program: Command): void {
  const deliveries = program.command('deliveries').description('the outbox: deliveries waiting, in flight or dead');
  deliveries
    .command('list')
    .description('list deliveries that are not done (pending, in flight, dead), oldest first')
    .option('--state <state>', 'only "pending" (waiting or in flight) or "dead"')
    .option('--connector <name>', 'only this connector')
    .option('--json', 'print JSON')
    .action(async (options: ListOptions, command: Command) => {
      const filter = parseFilter(options);
      const { deliveries: entries, owed = [] } = await listDeliveries(command, filter);
      // A connector taken out of the config keeps what it was owed, so its name may still list some.
      if (entries.length === 0 && owed.length === 0 && filter.connector !== undefined) unknownConnector(command, filter.connector);
      process.stdout.write(options.json ? `${JSON.stringify(entries, null, 2)}\n` : formatDeliveries(entries, Date.now(), owed));
    });
  deliveries
    .command('retry')
    .description('deliver a dead (or waiting) delivery again now, with a fresh retry window; exit 1 unless all were delivered')
    .argument('[id]', 'the delivery id, as `deliveries list` shows it')
    .option('--all-dead', 'retry every dead delivery')
    .option('--connector <name>', 'with --all-dead: only this connector')
    .option('--json', 'print JSON')
    .action(async (id: string | undefined, options: RetryOptions, command: Command) => {
      if (id && options.allDead) throw new CliExit(1, 'name one delivery id or pass --all-dead, not both');
      if (!id && !options.allDead) throw new CliExit(1, 'name one delivery id, or pass --all-dead');
      if (id && options.connector) throw new CliExit(1, '--connector goes with --all-dead; a delivery id names its connector already');
      const body = id ? { id } : { allDead: true as const, ...(options.connector ? { connector: options.connector } : {}) };
      // In-process or through the daemon, the same report: each retried delivery's next outcome.
      const report = await runOneShot(
        command,
        (app) => retryHere(app, body),
        async (call) => (await call('/admin/deliveries/retry', body)) as RetryReport,
      );
      printRetry(report, Boolean(options.json));
    });
}

/** A connector named on the command line that the config does not have, and that nothing is owed to. */
function unknownConnector(command: Command, name: string): void {
  const { connectors } = loadCliConfig(globalOptions(command)).config;
  if (connectors.some((c) => c.name === name)) return;
  throw new CliExit(1, noSuchConnector(name, connectors.map((c) => c.name)));
}

function parseFilter(options: ListOptions): DeliveryFilter {
  if (options.state !== undefined && options.state !== 'pending' && options.state !== 'dead' && options.state !== 'active') {
    throw new CliExit(1, `--state must be "pending" or "dead", not "${options.state}"`);
  }
  return { ...(options.state ? { state: options.state } : {}), ...(options.connector ? { connector: options.connector } : {}) };
}

/**
 * Read-only: straight from the store (no delivery starts). Beside a daemon holding the embedded
 * store: from the daemon with an admin token (it knows which are in flight), else read beside it.
 */
async function listDeliveries(command: Command, filter: DeliveryFilter): Promise<{ deliveries: ListedDelivery[]; owed?: OwedRange[] }> {
  const globals = globalOptions(command);
  const loaded = loadCliConfig(globals);
  const { config } = loaded;
  const holder = await embeddedHolder(config);
  const token = config.server.adminToken;
  if (holder?.adminUrl && token) {
    return (await callAdmin(holder, token, '/admin/deliveries/list', filter)) as { deliveries: ListedDelivery[]; owed?: OwedRange[] };
  }
  return withReadableStore(config, holder, cliLogger(loaded, { ...globals, quiet: true }), async (store) => ({
    deliveries: await store.outbox.list(filter),
    owed: owedOfRanges(await store.outbox.ranges(), filter),
  }));
}

async function retryHere(app: App, target: RetryTarget): Promise<RetryReport> {
  const report = await retryAndReport(app.outbox, target, RETRY_WAIT_MS).catch((error: unknown) => {
    // The daemon's admin API answers it 404 with the same message.
    if (isBridgeError(error) && error.code === 'outbox.not_found') throw new CliExit(1, error.message);
    throw error;
  });
  if (!report) throw new CliExit(1, `no delivery "${'id' in target ? target.id : ''}" (see: schoolbridge deliveries list)`);
  return report;
}

function printRetry(report: RetryReport, json: boolean): void {
  const kept = report.kept ?? [];
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    if (report.retried.length === 0 && report.failed.length === 0 && kept.length === 0) process.stdout.write('no dead deliveries\n');
    for (const id of report.delivered) process.stdout.write(`delivered  ${id}\n`);
    for (const f of report.failed) process.stdout.write(`${f.status.padEnd(9)}  ${f.id}${f.lastError ? `  (${printable(f.lastError.replace(/\s+/g, ' '))})` : ''}\n`);
    for (const k of kept) process.stdout.write(`kept       ${k.dead} dead of connector ${k.connector}  (${k.reason})\n`);
  }
  const notRetried = kept.reduce((n, k) => n + k.dead, 0);
  if (notRetried > 0) {
    const failed = report.failed.length > 0 ? `; ${report.failed.length} of ${report.retried.length} retried not delivered` : '';
    throw new CliExit(1, `${notRetried} dead ${notRetried === 1 ? 'delivery' : 'deliveries'} of connectors not in the config kept, not retried${failed} (see: schoolbridge deliveries list)`);
  }
  if (report.failed.length > 0) throw new CliExit(1, `${report.failed.length} of ${report.retried.length} not delivered (see: schoolbridge deliveries list)`);
}
