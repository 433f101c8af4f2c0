/**
 * bench:poll — poll cycles of a big school on each store engine. A sandbox with 100,000 students
 * (200,000 users) in a child process, the whole daemon (createApp, daemon mode: the store, the outbox
 * delivering to a `file` connector, webhook intake) in a process of its own per engine, and a webhook
 * sender in a worker thread of that process posting signed invoice events at 50/s.
 * Measures a full first `emit` cycle (and how long until all 300,000 records are in the connector's
 * files), a no-change cycle and a 1%-changed cycle, each beside a baseline taken right before it:
 * fetching both lists and JSON.parse-ing them (in a process of its own, see baseline()), the median
 * of three runs. Prints the
 * figures against the bars: first cycle ≤ 2.0× (SQLite) / 3.0× (PostgreSQL) the baseline, all records
 * delivered ≤ 4.0× / 6.0×, no-change and 1% cycles ≤ 1.0×, webhook p99 ≤ 50 ms during every cycle,
 * peak RSS ≤ 1 GB; and the store's size on disk per student. PostgreSQL's WAL is warmed first, as on a
 * server that has run a while (pg-wal.ts).
 *
 *   npm run bench:poll [-- --students 100000] [-- --engine sqlite|postgres] [-- --initial emit|baseline] [-- --pg-statements]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/schema.js';
import { readLines } from '../src/files/lines.js';
import { startPostgres } from '../test/support/postgres.js';
import { daemonNodeFlags } from '../test/support/daemon-flags.js';
import { PG_STATEMENTS_FLAGS, pgStatements, type PgStatements } from './pg-statements.js';
import { warmWal } from './pg-wal.js';
import { runNodeScript } from './node-script.js';
import { baseline, baselines } from './poll-baseline.js';
import { underLoad } from './poll-load.js';
import { startSandboxProcess } from './sandbox-process.js';

const STUDENTS = Number(argValue('--students') ?? 100_000);
const SECRET = 'bench-secret';
const TOKEN = 'bench-token';
const WEBHOOK_RATE = 50;
const BASELINE_RUNS = 3;
const ENGINES = (argValue('--engine') ? [argValue('--engine')] : ['sqlite', 'postgres']) as ('sqlite' | 'postgres')[];
const INITIAL = (argValue('--initial') ?? 'emit') as 'emit' | 'baseline';
/** PostgreSQL: the statements that took the most of the server's time in each phase (pg_stat_statements). */
const PG_STATEMENTS = process.argv.includes('--pg-statements');
const BARS = { sqlite: { first: 2.0, delivered: 4.0 }, postgres: { first: 3.0, delivered: 6.0 } } as const;
const SENDER = { secret: SECRET, rate: WEBHOOK_RATE };

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function startSandbox(): Promise<{ url: string; child: ChildProcess }> {
  return startSandboxProcess({ students: STUDENTS, clientSecret: SECRET, staticToken: TOKEN });
}

/** How the statements of a phase are reported (--pg-statements). */
const PER_STUDENT = { count: STUDENTS, unit: 'student in the lists' };
const INDENT = ' '.repeat(13);

interface Measured {
  name: string;
  ratio: number;
  p99: number;
}
const measured: Measured[] = [];

/** Lines of the connector's files, all streams: what it has delivered. */
async function deliveredLines(dir: string): Promise<number> {
  let lines = 0;
  for (const file of (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.jsonl'))) {
    await readLines(path.join(dir, file), () => void (lines += 1));
  }
  return lines;
}


async function measureCycle(app: App, name: string, url: string, statements: PgStatements | undefined, after?: () => Promise<void>): Promise<void> {
  const { median: base, runs } = await baselines(url, TOKEN, BASELINE_RUNS);
  await statements?.reset();
  const { value: result, ms, webhooks, p99 } = await underLoad(app, SENDER, () => app.poll.poller.runCycle({ trigger: 'bench' }));
  const s = result.streams;
  const p = result.phases;
  const ratio = ms / base;
  measured.push({ name, ratio, p99 });
  console.log(
    `${name.padEnd(12)} ${result.outcome} ${ms.toFixed(0).padStart(7)} ms  baseline ${base.toFixed(0).padStart(6)} ms (median of ${runs.map((r) => r.toFixed(0)).join(', ')})  ratio ${ratio.toFixed(2)}\n` +
      `             read and diff ${p.readMs} ms, checks ${p.checkMs} ms, commit ${p.commitMs} ms\n` +
      `             ${Object.entries(s).map(([stream, c]) => `${stream} +${c.created} ~${c.updated} -${c.deleted}`).join(', ')}\n` +
      `             ${webhooks}`,
  );
  await statements?.print(PER_STUDENT, INDENT);
  if (after) {
    // What the cycle enqueued (after a first cycle: its 300,000 created changes), delivered, under the same webhooks.
    await statements?.reset();
    const drain = await underLoad(app, SENDER, after);
    measured.push({ name: `${name} delivery`, ratio: (ms + drain.ms) / base, p99: drain.p99 });
    console.log(`             then enqueued and delivered in ${drain.ms.toFixed(0)} ms: all in the files ${((ms + drain.ms) / 1000).toFixed(1)} s after the cycle started, ratio ${((ms + drain.ms) / base).toFixed(2)}\n             ${drain.webhooks.trim()}`);
    await statements?.print(PER_STUDENT, INDENT);
  } else {
    await app.outbox.whenIdle();
  }
}

/**
 * Changes every hundredth student in the sandbox (in id order), from a process of its own: the list it
 * reads to pick them and the requests it sends stay out of the daemon's heap, whose garbage collector
 * would otherwise pay for them during the cycle measured right after (even the store's index, 100,000
 * keys read here, was left to it).
 */
async function changeOnePercent(url: string): Promise<void> {
  const code = `
    const { Agent, request } = require('undici');
    (async () => {
      const [url, token] = process.argv.slice(1);
      const dispatcher = new Agent({ connections: 4 });
      const list = await request(url + '/api/v2/students', { dispatcher, headers: { authorization: 'Bearer ' + token } });
      const ids = JSON.parse(await list.body.text()).data.students.map((student) => student.id).sort((a, b) => a - b);
      for (let i = 0; i < ids.length; i += 100) {
        const response = await request(url + '/_sandbox/students/' + ids[i], {
          dispatcher, method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lastName: 'Zmiana' + i }),
        });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error('PATCH of student ' + ids[i] + ' answered ' + response.statusCode);
      }
      await dispatcher.close();
    })().catch((error) => { console.error(error); process.exit(1); });`;
  await runNodeScript(code, [url, TOKEN]);
}

/** The store's size on disk: the SQLite files, or PostgreSQL's relations of our schema. */
async function storeBytes(engine: 'sqlite' | 'postgres', where: string): Promise<number> {
  if (engine === 'sqlite') {
    let bytes = 0;
    for (const file of await readdir(where)) if (file.startsWith('schoolbridge.db')) bytes += (await stat(path.join(where, file))).size;
    return bytes;
  }
  const client = new pg.Client({ connectionString: where });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(`SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'schoolbridge' AND c.relkind = 'r'`);
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

/** Each engine in a process of its own: its peak RSS is the daemon's, not the run's. */
async function eachEngineApart(url: string): Promise<void> {
  const postgres = ENGINES.includes('postgres') ? await startPostgres(PG_STATEMENTS ? { flags: PG_STATEMENTS_FLAGS } : {}) : undefined;
  try {
    if (postgres) console.log(await warmWal(postgres.url()));
    for (const engine of ENGINES) {
      const where = engine === 'postgres' ? await postgres!.createDatabase('poll') : '';
      const script = fileURLToPath(import.meta.url);
      const child = spawn(process.execPath, [...daemonNodeFlags(), ...process.execArgv, script, '--child', engine, '--where', where, '--sandbox', url, '--students', String(STUDENTS), '--initial', INITIAL, ...(PG_STATEMENTS ? ['--pg-statements'] : [])], { stdio: 'inherit' });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      if (code !== 0) throw new Error(`bench:poll --engine ${engine} exited with ${code}`);
    }
  } finally {
    await postgres?.destroy();
  }
}

async function main(): Promise<void> {
  const child = argValue('--child') as 'sqlite' | 'postgres' | undefined;
  if (child) return runEngine(child, argValue('--where') ?? '', argValue('--sandbox')!);
  console.log(`bench:poll — ${STUDENTS} students; node ${process.version}; engines ${ENGINES.join(', ')}; poll.initial ${INITIAL}`);
  const t0 = performance.now();
  const sandbox = await startSandbox();
  console.log(`sandbox ready at ${sandbox.url} in ${(performance.now() - t0).toFixed(0)} ms (child process)`);
  try {
    console.log(`warm-up baseline ${(await baseline(sandbox.url, TOKEN)).toFixed(0)} ms (renders the sandbox's list cache)`);
    await eachEngineApart(sandbox.url);
  } finally {
    sandbox.child.kill('SIGTERM');
  }
}

/** One daemon with a fresh store on `engine`: full, no-change and 1%-changed cycles. */
async function runEngine(engine: 'sqlite' | 'postgres', where: string, url: string): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-poll-'));
  const storeDir = path.join(dir, 'store');
  const out = path.join(dir, 'out');
  console.log(`--- ${engine} (${engine === 'sqlite' ? storeDir : 'embedded PostgreSQL'})`);
  const config = configSchema.parse({
    upstream: { baseUrl: url, clientId: 'sandbox-client', clientSecret: SECRET, timeoutMs: 600_000 },
    server: { port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { schedule: '0 0 1 1 *', onStart: false, initial: INITIAL },
    export: { onStart: false },
    store: engine === 'sqlite' ? { driver: 'sqlite', dir: storeDir } : { driver: 'postgres', url: where },
    connectors: [{ name: 'files', type: 'file', streams: ['students', 'users', 'invoices', 'events'], dir: out }],
  });
  const app = await createApp({ config, log: pino({ level: 'warn' }), mode: 'daemon' });
  await app.start();
  const statements = engine === 'postgres' && PG_STATEMENTS ? await pgStatements(where) : undefined;
  try {
    const idle = await underLoad(app, SENDER, () => new Promise((resolve) => setTimeout(resolve, 3000)));
    console.log(`idle (no cycle, 3 s): ${idle.webhooks}`);
    await measureCycle(app, `full/${INITIAL}`, url, statements, () => app.outbox.whenIdle());
    const lines = await deliveredLines(out);
    const users = (await app.store.snapshot.size('users'));
    console.log(`             the connector's files hold ${lines} lines (students ${await app.store.snapshot.size('students')} + users ${users} + webhook events)`);
    await measureCycle(app, 'no-change', url, statements);
    await changeOnePercent(url);
    // The sandbox renders its list again after the PATCHes: that one slow answer must not go into
    // the 1% cycle's baseline (it made the ratio look ~2× better than it is).
    console.log(`             (sandbox re-render after the changes: ${(await baseline(url, TOKEN)).toFixed(0)} ms, not counted)`);
    await measureCycle(app, '1% changed', url, statements);
    const bytes = await storeBytes(engine, engine === 'sqlite' ? storeDir : where);
    const rss = process.resourceUsage().maxRSS / 1024;
    console.log(`store on disk: ${(bytes / 1024 / 1024).toFixed(0)} MiB, ${(bytes / STUDENTS).toFixed(0)} B per student (snapshot of ${STUDENTS} students and ${users} users, outbox and inbox included)`);
    console.log(`peak RSS ${rss.toFixed(0)} MiB (this daemon process)`);
    const bar = BARS[engine];
    const verdict = (name: string, ratio: number, max: number) => `${name} ${ratio.toFixed(2)} ≤ ${max} ${ratio <= max ? 'met' : 'NOT MET'}`;
    const get = (name: string) => measured.find((m) => m.name === name);
    console.log(`bars (${engine}): ${[
      verdict('first cycle', get(`full/${INITIAL}`)!.ratio, bar.first),
      verdict('all delivered', get(`full/${INITIAL} delivery`)!.ratio, bar.delivered),
      verdict('no-change', get('no-change')!.ratio, 1.0),
      verdict('1% changed', get('1% changed')!.ratio, 1.0),
      `webhook p99 max ${Math.max(...measured.map((m) => m.p99)).toFixed(1)} ms ≤ 50 ${Math.max(...measured.map((m) => m.p99)) <= 50 ? 'met' : 'NOT MET'}`,
      `peak RSS ${rss.toFixed(0)} MiB ≤ 1024 ${rss <= 1024 ? 'met' : 'NOT MET'}`,
    ].join('; ')}`);
  } finally {
    await statements?.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
