import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { daemonNodeFlags } from '../test/support/daemon-flags.js';
import type { TestPostgres } from '../test/support/postgres.js';
import { freePort } from '../test/support/net.js';

/**
 * bench:ingest --replicas N: the same load against one daemon process and against N daemon
 * processes on one PostgreSQL database (requests spread over them in turn), each on a fresh
 * database, in the same run. A figure to report: on a machine of few cores the replicas share them
 * with PostgreSQL and the load generator, so no bar applies.
 */
interface Measured {
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

type InChild = (url: string, target: string, count: number, concurrency: number, warmup: number, onWindow: (pid: number) => void) => Promise<Measured>;

const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');

export async function runReplicas(options: {
  postgres: TestPostgres;
  replicas: number;
  load: { events: number; concurrency: number; warmup: number };
  secret: string;
  inChild: InChild;
}): Promise<void> {
  const { events, concurrency, warmup } = options.load;
  const rows: { count: number; run: Measured }[] = [];
  for (const count of [1, options.replicas]) {
    const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-bench-replicas-'));
    const url = await options.postgres.createDatabase('replicas');
    const daemons: { child: ChildProcess; url: string }[] = [];
    try {
      for (let i = 0; i < count; i++) daemons.push(await startDaemon(dir, i, url, options.secret));
      await Promise.all(daemons.map((d) => ready(d.url)));
      const run = await options.inChild(daemons.map((d) => d.url).join(','), '/webhooks/v2', events, concurrency, warmup, () => {});
      rows.push({ count, run });
    } finally {
      await Promise.all(daemons.map((d) => stop(d.child)));
      await rm(dir, { recursive: true, force: true });
    }
  }
  const [one, many] = rows;
  const line = ({ count, run }: { count: number; run: Measured }) =>
    `  ${`${count} replica${count > 1 ? 's' : ''}`.padEnd(12)} ${run.eventsPerSecond.toFixed(0).padStart(7)} ev/s   p50 ${run.p50Ms.toFixed(2).padStart(6)} ms   p99 ${run.p99Ms.toFixed(2).padStart(6)} ms   statuses ${JSON.stringify(run.statuses)}`;
  process.stdout.write([
    `postgres, replicas (daemon processes on one database, ${events} deliveries spread over them, concurrency ${concurrency}):`,
    line(one!),
    line(many!),
    `  ${options.replicas} replicas / 1: ${(many!.run.eventsPerSecond / one!.run.eventsPerSecond).toFixed(2)}× the events/s`,
    '',
  ].join('\n'));
}

async function startDaemon(dir: string, index: number, url: string, secret: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const file = path.join(dir, `replica-${index}.json`);
  await writeFile(file, JSON.stringify({
    upstream: { baseUrl: 'sandbox', clientId: 'bench-client', clientSecret: secret },
    sandbox: { students: 1 },
    server: { host: '127.0.0.1', port },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: { driver: 'postgres', url },
    connectors: [{ name: 'files', type: 'file', streams: ['events', 'invoices'], dir: path.join(dir, 'out') }],
    log: { level: 'error', pretty: false },
  }));
  const child = spawn(process.execPath, [...daemonNodeFlags(), BIN, 'start', '-c', file], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function ready(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`${url}/healthz`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline) throw new Error(`the daemon at ${url} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}
