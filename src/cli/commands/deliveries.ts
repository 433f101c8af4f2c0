import type { Command } from 'commander';
import { pino } from 'pino';
import type { App } from '../../app.js';
import { formatDeliveries } from '../../outbox/index.js';
import { openStore, type DeliveryFilter, type ListedDelivery } from '../../store/index.js';
import { CliExit } from '../errors.js';
import { awaitDeliveries, callAdmin, embeddedHolder, globalOptions, loadCliConfig, runOneShot } from '../context.js';

/** How long `deliveries retry` waits for the retried deliveries before it gives up (they stay queued). */
const RETRY_WAIT_MS = 120_000;

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
      const entries = await listDeliveries(command, filter);
      process.stdout.write(options.json ? `${JSON.stringify(entries, null, 2)}\n` : formatDeliveries(entries, Date.now()));
    });
  deliveries
    .command('retry')
    .description('deliver a dead (or waiting) delivery again now, with a fresh retry window; exit 1 unless all were delivered')
    .argument('[id]', 'the delivery id, as `deliveries list` shows it')
    .option('--all-dead', 'retry every dead delivery')
    .option('--connector <name>', 'with --all-dead: only this connector')
    .option('--json', 'print JSON')
    .action(async (id: string | undefined, options: RetryOptions, command: Command) => {
      if (!id === !options.allDead) throw new CliExit(1, 'name one delivery id, or pass --all-dead');
      const body = id ? { id } : { allDead: true as const, ...(options.connector ? { connector: options.connector } : {}) };
      const report = await runOneShot(
        command,
        (app) => retryHere(app, body),
        async (call) => {
          const answer = (await call('/admin/deliveries/retry', body)) as { retried: string[] };
          return { retried: answer.retried, delivered: [], failed: [], viaDaemon: true };
        },
      );
      printRetry(report, Boolean(options.json));
    });
}

function parseFilter(options: ListOptions): DeliveryFilter {
  if (options.state !== undefined && options.state !== 'pending' && options.state !== 'dead' && options.state !== 'active') {
    throw new CliExit(1, `--state must be "pending" or "dead", not "${options.state}"`);
  }
  return { ...(options.state ? { state: options.state } : {}), ...(options.connector ? { connector: options.connector } : {}) };
}

/** Read-only: straight from the store (no delivery starts), or from the daemon that holds the embedded one. */
async function listDeliveries(command: Command, filter: DeliveryFilter): Promise<ListedDelivery[]> {
  const { config } = loadCliConfig(globalOptions(command));
  const holder = await embeddedHolder(config);
  if (holder) {
    const token = config.server.adminToken;
    if (!token) throw new CliExit(1, `a daemon (pid ${holder.pid}) holds the store ${config.store.dir}; set server.adminToken so this command can ask it`);
    const answer = (await callAdmin(holder, token, '/admin/deliveries/list', filter)) as { deliveries: ListedDelivery[] };
    return answer.deliveries;
  }
  const store = openStore(config.store, pino({ level: 'silent' }));
  await store.start();
  try {
    return await store.outbox.list(filter);
  } finally {
    await store.stop();
  }
}

interface RetryReport {
  retried: string[];
  delivered: string[];
  failed: { id: string; status: string; lastError?: string }[];
  viaDaemon?: boolean;
}

async function retryHere(app: App, body: { id: string } | { allDead: true; connector?: string }): Promise<RetryReport> {
  let retried: string[];
  if ('id' in body) {
    const entry = await app.outbox.retry(body.id);
    if (!entry) throw new CliExit(1, `no delivery "${body.id}" (see: schoolbridge deliveries list)`);
    retried = [entry.id];
  } else retried = await app.outbox.retryAllDead(body.connector);
  await awaitDeliveries(app, RETRY_WAIT_MS);
  const report: RetryReport = { retried, delivered: [], failed: [] };
  for (const id of retried) {
    const delivery = await app.outbox.get(id);
    if (!delivery) report.delivered.push(id);
    else report.failed.push({ id, status: delivery.status, ...(delivery.lastError ? { lastError: delivery.lastError } : {}) });
  }
  return report;
}

function printRetry(report: RetryReport, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (report.retried.length === 0) process.stdout.write('no dead deliveries\n');
  else if (report.viaDaemon) process.stdout.write(`the daemon retries ${report.retried.length}: ${report.retried.join(', ')}\n`);
  else {
    for (const id of report.delivered) process.stdout.write(`delivered  ${id}\n`);
    for (const f of report.failed) process.stdout.write(`${f.status.padEnd(9)}  ${f.id}${f.lastError ? `  (${f.lastError})` : ''}\n`);
  }
  if (report.failed.length > 0) throw new CliExit(1, `${report.failed.length} of ${report.retried.length} not delivered (see: schoolbridge deliveries list)`);
}
