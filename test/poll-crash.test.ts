import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../src/metrics.js';
import { backlogKey } from '../src/poll/backlog.js';
import { createPoller } from '../src/poll/poller.js';
import { STATE_COLLECTION } from '../src/poll/snapshot.js';
import { memoryOutbox } from '../src/poll/testing.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { createStore } from '../src/store/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { tempDir } from './support/temp.js';

/**
 * The commit protocol under a real crash (issue 7): a child process runs a first poll cycle into a
 * store on disk and is killed with SIGKILL between two of its commits; a clean re-run in a new process
 * (here) then enqueues exactly the change ids a dry run predicts — none lost, none twice.
 */
const log = pino({ level: 'silent' });
const fixture = path.join(import.meta.dirname, 'fixtures', 'poll-crash.ts');
let sandbox: Sandbox;
let dir: { dir: string; cleanup(): Promise<void> };
let dispatcher: Agent;

beforeEach(async () => {
  dir = await tempDir('schoolbridge-poll-crash-');
  sandbox = createSandbox({ students: 30, seed: 11, log });
  await sandbox.start();
  dispatcher = new Agent();
});

afterEach(async () => {
  await sandbox.stop();
  await dispatcher.close();
  await dir.cleanup();
});

/** Runs the child and kills it once `due(output)` holds (checked after each line it prints). */
function runChildUntilKilled(due: (output: string) => boolean): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir.dir, sandbox.url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (due(output)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(output) : reject(new Error(`child was not killed: ${output}`))));
  });
}

function pollerOn(store: ReturnType<typeof createStore>) {
  const upstream = createUpstreamClient({ baseUrl: sandbox.url, auth: { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' }, dispatcher, log });
  const outbox = memoryOutbox(store);
  return { outbox, poller: createPoller({ store, upstream, outbox, log, metrics: createMetricsRegistry(), poll: { initial: 'emit', maxDeleteRatio: 0.2 } }) };
}

/** The commits the child reported after its cycle ended (the backlog's). */
const backlogCommits = (output: string) => (output.includes('cycle ok\n') ? output.split('cycle ok\n')[1]!.split('\n').filter((l) => l.startsWith('committed')).length : 0);

describe('poll cycle killed with SIGKILL mid-commit', () => {
  it.each([
    // During the cycle's commit: snapshot chunks and the backlog's marker on disk, no change enqueued yet.
    { phase: 'the cycle', due: (output: string) => output.includes('committed 3\n'), enqueued: (n: number) => n === 0 },
    // During the backlog: some chunks of created changes in the outbox, the marker's progress with them.
    { phase: 'the backlog', due: (output: string) => backlogCommits(output) >= 3, enqueued: (n: number) => n >= 15 },
  ])('killed during $phase, the re-run after restart enqueues exactly the predicted ids', async ({ due, enqueued }) => {
    const memory = createStore({ log });
    await memory.start();
    const expected = ((await pollerOn(memory).poller.runCycle({ dryRun: true })).changes ?? []).map((c) => c.id).sort();
    await memory.stop();
    expect(expected.length).toBeGreaterThan(60);

    const output = await runChildUntilKilled(due);
    expect(output).not.toContain('done');

    const store = createStore({ dir: dir.dir, log });
    await store.start();
    try {
      const { poller, outbox } = pollerOn(store);
      const survived = outbox.records().length;
      expect(enqueued(survived), `${survived} enqueued before the kill`).toBe(true);
      expect(survived).toBeLessThan(expected.length);
      expect(store.has(STATE_COLLECTION, backlogKey('students')) || store.has(STATE_COLLECTION, backlogKey('users'))).toBe(true);
      await poller.start(); // resumes the backlog
      expect((await poller.runCycle()).outcome).toBe('ok');
      await poller.flushBacklog();
      const ids = outbox.records().map((r) => r.id);
      expect([...ids].sort()).toEqual(expected);
      expect(new Set(ids).size).toBe(ids.length);
      await poller.stop();
    } finally {
      await store.stop();
    }
  });
});
