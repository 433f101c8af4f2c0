import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../src/metrics.js';
import { createPoller } from '../src/poll/poller.js';
import { recordingOutbox } from './support/poll.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import type { Store } from '../src/store/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { ENGINES, testStore, type TestStore } from './support/stores.js';
import { typeScriptArgs } from './support/typescript.js';

/**
 * A first poll cycle under a real crash: a child process runs it into a store and is killed with
 * SIGKILL between two of its store calls: while the new snapshot is staged, right after it is swapped
 * in, or while its created changes are delivered from it. A clean re-run in a new process (here) then
 * delivers the rest: with what the child delivered, exactly the change ids a dry run predicts, none
 * lost, none twice.
 */
const log = pino({ level: 'silent' });
const fixture = path.join(import.meta.dirname, 'fixtures', 'poll-crash.ts');
let sandbox: Sandbox;
let dispatcher: Agent;
const made: TestStore[] = [];

beforeEach(async () => {
  sandbox = createSandbox({ students: 30, seed: 11, log });
  await sandbox.start();
  dispatcher = new Agent();
});

afterEach(async () => {
  await sandbox.stop();
  await dispatcher.close();
  for (const m of made.splice(0)) await m.cleanup();
});

/** Runs the child on the store at `where` and kills it once `due(output)` holds (checked after each line it prints). */
function runChildUntilKilled(engine: string, where: string, due: (output: string) => boolean): Promise<string> {
  const child = spawn(process.execPath, typeScriptArgs(fixture, engine, where, sandbox.url), { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let pending = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      if (due(output)) child.kill('SIGKILL');
      // The child waits after each settle: let it go on until it is due.
      else for (const line of lines) if (line.startsWith('settled ')) child.stdin.write('\n');
    });
    child.stdin.on('error', () => {});
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(output) : reject(new Error(`child was not killed: ${output}`))));
  });
}

function pollerOn(store: Store) {
  const upstream = createUpstreamClient({ baseUrl: sandbox.url, auth: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' }, dispatcher, log });
  const outbox = recordingOutbox(store);
  return { outbox, poller: createPoller({ store, upstream, outbox, log, metrics: createMetricsRegistry(), poll: { initial: 'emit', maxDeleteRatio: 0.2 } }) };
}

const count = (output: string, call: string) => output.split('\n').filter((line) => line.startsWith(`${call} `)).length;

const settledIds = (output: string) => output.split('\n').filter((line) => line.startsWith('settled ')).flatMap((line) => line.slice(8).split(',').filter(Boolean));

describe.each(ENGINES)('poll cycle killed with SIGKILL on %s', (engine) => {
  it.each([
    // While the fresh snapshot is staged: nothing a reader sees has moved yet.
    { phase: 'the staging', due: (output: string) => count(output, 'stageFresh') >= 1, delivered: (n: number) => n === 0 },
    // Right after the swap: every created change is owed, none delivered.
    { phase: 'the swap', due: (output: string) => count(output, 'applyFresh') >= 1, delivered: (n: number) => n === 0 },
    // While the created changes are delivered from the snapshot, five at a time.
    { phase: 'the deliveries', due: (output: string) => count(output, 'settled') >= 4, delivered: (n: number) => n === 20 },
  ])('killed during $phase, the re-run after restart delivers exactly the predicted ids', async ({ due, delivered }) => {
    const empty = await testStore(engine);
    made.push(empty);
    const predicted = pollerOn(empty.store);
    const expected = ((await predicted.poller.runCycle({ dryRun: true })).changes ?? []).map((c) => c.id).sort();
    await predicted.poller.stop();
    expect(expected.length).toBeGreaterThan(60);

    const target = await testStore(engine, { start: false });
    made.push(target);
    const output = await runChildUntilKilled(engine, target.where, due);
    expect(output).not.toContain('done');
    const before = settledIds(output);
    expect(delivered(before.length), `${before.length} delivered before the kill`).toBe(true);

    await target.store.start();
    const { poller, outbox } = pollerOn(target.store);
    await poller.start();
    expect((await poller.runCycle()).outcome).toBe('ok');
    const after = (await outbox.records()).map((r) => r.id);
    const ids = [...before, ...after];
    expect([...ids].sort()).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
    await poller.stop();
  });
});
