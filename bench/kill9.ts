/**
 * bench:kill9 — kill -9 at 20 moments of a first `emit` cycle of a big school and its deliveries, on
 * each store engine. A sandbox (100,000 students, 200,000 users) runs in a child process; the daemon
 * (`schoolbridge start`, the real executable and config file, a `file` connector) in another, killed
 * with SIGKILL and started again 20 times:
 * - while the first cycle reads, diffs and stages (every 2 s after start, until a cycle gets through),
 * - right as a cycle reports it committed,
 * - at evenly spaced points of the deliveries (by the lines in the connector's files), each with a
 *   random delay of up to 200 ms on top so that kills land inside appends and settlements.
 * Then a last start runs to the end, and the files are checked: every student and user of the sandbox
 * exactly once, every line parses, no record id twice. Exits 1 when a check fails.
 *
 *   npm run bench:kill9 [-- --students 100000] [-- --engine sqlite|postgres] [-- --kills 20]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { readLines } from '../src/files/lines.js';
import { startPostgres } from '../test/support/postgres.js';
import { lineCounter } from './line-counter.js';
import { startSandboxProcess } from './sandbox-process.js';
import { daemonNodeFlags } from '../test/support/daemon-flags.js';

const STUDENTS = Number(argValue('--students') ?? 100_000);
const KILLS = Number(argValue('--kills') ?? 20);
const ENGINES = (argValue('--engine') ? [argValue('--engine')] : ['sqlite', 'postgres']) as ('sqlite' | 'postgres')[];
const SECRET = 'bench-secret';
const TOKEN = 'bench-token';
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
/** Pre-commit kills come every CYCLE_STEP_MS after start; at most this many before waiting for a commit. */
const CYCLE_STEP_MS = 2000;
const MAX_CYCLE_KILLS = 8;
/**
 * The longest any one wait may take: a whole first cycle and its deliveries take minutes even on
 * PostgreSQL, where a restart also waits for the killed daemon's roles to run out.
 */
const WAIT_LIMIT_MS = 15 * 60_000;

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function startSandbox(): Promise<{ url: string; child: ChildProcess }> {
  return startSandboxProcess({ students: STUDENTS, clientSecret: SECRET, staticToken: TOKEN });
}

/** The keys of a list as the sandbox serves it: what the files must hold in the end. */
async function sandboxKeys(url: string, stream: 'students' | 'users'): Promise<Set<number>> {
  const dispatcher = new Agent();
  try {
    const response = await request(`${url}/api/v2/${stream}`, { dispatcher, headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await response.body.json()) as { data: Record<string, { id: number }[]> };
    return new Set(body.data[stream]!.map((item) => item.id));
  } finally {
    await dispatcher.close();
  }
}


interface Daemon {
  child: ChildProcess;
  /** Whether the daemon has logged that a poll cycle committed. */
  committed(): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

function startDaemon(configFile: string): Daemon {
  const child = spawn(process.execPath, [...daemonNodeFlags(), BIN, 'start', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let committed = false;
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    committed ||= output.includes('poll cycle done');
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, committed: () => committed, exited, output: () => output };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function kill(daemon: Daemon): Promise<void> {
  daemon.child.kill('SIGKILL');
  const { signal, code } = await daemon.exited;
  if (signal !== 'SIGKILL') throw new Error(`the daemon exited by itself (code ${code}) before the kill:\n${daemon.output()}`);
}

/** Waits until `due()`; throws if the daemon exited first or WAIT_LIMIT_MS went by. */
async function waitFor(daemon: Daemon, due: () => Promise<boolean>, what: string): Promise<void> {
  let exited = false;
  void daemon.exited.then(() => (exited = true));
  const since = performance.now();
  while (!(await due())) {
    if (exited) throw new Error(`the daemon exited while waiting for ${what}:\n${daemon.output()}`);
    if (performance.now() - since > WAIT_LIMIT_MS) throw new Error(`waited ${WAIT_LIMIT_MS / 60_000} minutes for ${what} in vain; the daemon's last output:\n${daemon.output()}`);
    await sleep(25);
  }
}

async function runEngine(engine: 'sqlite' | 'postgres', url: string, databaseUrl: string | undefined): Promise<boolean> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-kill9-'));
  const out = path.join(dir, 'out');
  const configFile = path.join(dir, 'schoolbridge.yaml');
  const store = engine === 'sqlite' ? `  driver: sqlite\n  dir: ${path.join(dir, 'store')}` : `  driver: postgres\n  url: ${databaseUrl}`;
  await writeFile(
    configFile,
    `upstream:\n  baseUrl: ${url}\n  clientId: sandbox-client\n  clientSecret: ${SECRET}\n  timeoutMs: 600000\n` +
      `server:\n  port: 0\nwebhooks:\n  reconcileOnStart: false\n` +
      `poll:\n  schedule: "0 0 1 1 *"\n  onStart: true\n  initial: emit\nexport:\n  onStart: false\n` +
      `store:\n${store}\nlog:\n  level: info\n  pretty: false\n` +
      `connectors:\n  - name: files\n    type: file\n    streams: [students, users]\n    dir: ${out}\n`,
  );
  const [students, users] = await Promise.all([sandboxKeys(url, 'students'), sandboxKeys(url, 'users')]);
  const total = students.size + users.size;
  const lines = lineCounter(out);
  const moments: string[] = [];
  const started = performance.now();
  console.log(`--- ${engine}: ${students.size} students, ${users.size} users; ${KILLS} kills`);
  // Killed when a wait fails, so that no daemon outlives the bench.
  let running: Daemon | undefined;
  try {
    let cycleKills = 0;
    let commitKilled = false;
    let deliveryKills = 0;
    while (moments.length < KILLS) {
      const daemon = (running = startDaemon(configFile));
      const since = performance.now();
      const before = await lines();
      // Before the first commit only: a restart after it may deliver nothing for a while (on
      // PostgreSQL it waits for the killed daemon's roles to run out), which is no cycle to kill.
      if (!commitKilled && !daemon.committed() && cycleKills < MAX_CYCLE_KILLS && before === 0) {
        // In the first cycle: a little later after each start, until one commits before its kill.
        const delay = CYCLE_STEP_MS * (cycleKills + 1);
        await waitFor(daemon, async () => daemon.committed() || performance.now() - since >= delay, 'a moment in the cycle');
        if (!daemon.committed()) {
          await kill(daemon);
          cycleKills += 1;
          moments.push(`${(delay / 1000).toFixed(1)} s after start, in the first cycle (${await lines()} lines delivered)`);
          continue;
        }
      }
      if (!commitKilled) {
        await waitFor(daemon, async () => daemon.committed(), 'the first commit');
        await kill(daemon);
        commitKilled = true;
        moments.push(`as the cycle reported its commit (${await lines()} lines delivered)`);
        continue;
      }
      // The deliveries: evenly spaced thresholds over the lines still to come.
      const left = KILLS - moments.length;
      const target = before + Math.floor(((total - before) * 1) / (left + 1));
      deliveryKills += 1;
      await waitFor(daemon, async () => (await lines()) >= target, `${target} lines`);
      await sleep(Math.floor(Math.random() * 200));
      await kill(daemon);
      moments.push(`during deliveries, at ${target}+ of ${total} lines (${await lines()} after the kill)`);
    }
    // The last start runs to the end: all lines in, then a clean stop.
    const daemon = (running = startDaemon(configFile));
    await waitFor(daemon, async () => (await lines()) >= total, `all ${total} lines`);
    await waitFor(daemon, async () => daemon.committed(), 'the last start\'s poll cycle');
    daemon.child.kill('SIGTERM');
    const { code } = await daemon.exited;
    for (const [i, moment] of moments.entries()) console.log(`  kill ${String(i + 1).padStart(2)}: ${moment}`);
    console.log(`  ${cycleKills} in the first cycle, 1 at its commit, ${deliveryKills} during deliveries; a last clean run stopped with exit code ${code}; ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
    const problems = await check(out, { students, users });
    if (code !== 0) problems.push(`the last run stopped with exit code ${code}`);
    console.log(problems.length === 0 ? `  ${engine}: every student and user exactly once, every line parses: PASSED` : `  ${engine}: FAILED\n    ${problems.join('\n    ')}`);
    return problems.length === 0;
  } finally {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** The invariants: each key of the sandbox's lists exactly once, created, and nothing else; every line parses. */
async function check(out: string, expected: Record<'students' | 'users', Set<number>>): Promise<string[]> {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const stream of ['students', 'users'] as const) {
    const seen = new Map<number, number>();
    let unparsable = 0;
    await readLines(path.join(out, `${stream}.jsonl`), (line) => {
      let record: { id: string; stream: string; op: string; key: number };
      try {
        record = JSON.parse(line.toString()) as typeof record;
      } catch {
        unparsable += 1;
        return;
      }
      if (ids.has(record.id)) problems.push(`record id ${record.id} twice`);
      ids.add(record.id);
      if (record.stream !== stream || record.op !== 'created') problems.push(`unexpected record ${record.id} (${record.stream} ${record.op})`);
      seen.set(record.key, (seen.get(record.key) ?? 0) + 1);
    });
    const twice = [...seen].filter(([, n]) => n > 1).length;
    const missing = [...expected[stream]].filter((key) => !seen.has(key)).length;
    const unknown = [...seen.keys()].filter((key) => !expected[stream].has(key)).length;
    console.log(`  ${stream}.jsonl: ${seen.size} keys; missing ${missing}, more than once ${twice}, not in the sandbox ${unknown}, unparsable lines ${unparsable}`);
    if (unparsable) problems.push(`${stream}: ${unparsable} unparsable lines`);
    if (missing) problems.push(`${stream}: ${missing} keys missing`);
    if (twice) problems.push(`${stream}: ${twice} keys more than once`);
    if (unknown) problems.push(`${stream}: ${unknown} keys not in the sandbox`);
  }
  return problems.slice(0, 20);
}

async function main(): Promise<void> {
  console.log(`bench:kill9 — ${STUDENTS} students; node ${process.version}; engines ${ENGINES.join(', ')}`);
  const sandbox = await startSandbox();
  const postgres = ENGINES.includes('postgres') ? await startPostgres() : undefined;
  let passed = true;
  try {
    for (const engine of ENGINES) {
      const databaseUrl = engine === 'postgres' ? await postgres!.createDatabase('kill9') : undefined;
      passed = (await runEngine(engine, sandbox.url, databaseUrl)) && passed;
    }
  } finally {
    sandbox.child.kill('SIGTERM');
    await postgres?.destroy();
  }
  process.exitCode = passed ? 0 : 1;
}

await main();
