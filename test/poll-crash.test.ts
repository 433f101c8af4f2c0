import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../src/metrics.js';
import { createPoller } from '../src/poll/poller.js';
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

function runChildUntilKilled(afterCommits: number): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir.dir, sandbox.url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`committed ${afterCommits}\n`)) child.kill('SIGKILL');
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

describe('poll cycle killed with SIGKILL mid-commit', () => {
  it('the re-run after restart enqueues exactly the predicted ids', async () => {
    const memory = createStore({ log });
    await memory.start();
    const expected = ((await pollerOn(memory).poller.runCycle({ dryRun: true })).changes ?? []).map((c) => c.id).sort();
    await memory.stop();
    expect(expected.length).toBeGreaterThan(60);

    const output = await runChildUntilKilled(3);
    expect(output).not.toContain('done');

    const store = createStore({ dir: dir.dir, log });
    await store.start();
    try {
      const { poller, outbox } = pollerOn(store);
      const survived = outbox.records().length;
      expect(survived).toBeGreaterThanOrEqual(15); // at least the 3 acknowledged chunks of 5
      expect(survived).toBeLessThan(expected.length);
      expect((await poller.runCycle()).outcome).toBe('ok');
      const ids = outbox.records().map((r) => r.id);
      expect([...ids].sort()).toEqual(expected);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await store.stop();
    }
  });
});
