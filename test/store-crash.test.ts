import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { freshStoreAt, openStoreAt, type StoreAt } from './support/store-at.js';
import { ENGINES } from './support/stores.js';
import { typeScriptArgs } from './support/typescript.js';

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * Runs the writer until it has acknowledged `atLeast` events, then SIGKILLs it while more are in
 * flight; returns every id it acknowledged (printed only after `accept` resolved).
 */
function runAndKill(at: StoreAt, run: string, atLeast: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, typeScriptArgs('test/fixtures/store-writer.ts', at.engine, at.where, run), { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const acked: string[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        const [id, result] = line.split(' ');
        if (result !== 'stored') reject(new Error(`the writer's event ${id} was ${result}, not stored`));
        acked.push(id!);
      }
      if (acked.length >= atLeast && !child.killed) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`writer exited without being killed (${signal})`))));
  });
}

const deliveryOf = (id: string) => `hook:events:${id}`;

/**
 * Reads back every id a run may have written and says which ones are stored whole, and which only in
 * part: numbered from 1, up to past the highest acknowledged or queued. The writer keeps ten in
 * flight, but it goes on writing (and printing into the pipe's buffer) until the kill, however far
 * the test is behind in reading what it printed.
 */
async function readBack(at: StoreAt, runs: Map<string, number>): Promise<{ whole: Set<string>; partial: string[]; listed: number }> {
  const store = openStoreAt(at, silentLogger());
  await store.start();
  try {
    const listed = await store.outbox.list();
    const queuedHighest = new Map<string, number>();
    for (const delivery of listed) {
      const [run, n] = delivery.id.slice(deliveryOf('').length).split(':');
      queuedHighest.set(run!, Math.max(queuedHighest.get(run!) ?? 0, Number(n)));
    }
    const whole = new Set<string>();
    const partial: string[] = [];
    for (const [run, acked] of runs) {
      const highest = Math.max(acked, queuedHighest.get(run) ?? 0);
      const ids = Array.from({ length: highest + 50 }, (_, i) => `${run}:${i + 1}`);
      const found = await Promise.all(ids.map(async (id) => [id, await store.inbox.get(id), await store.outbox.get(deliveryOf(id))] as const));
      for (const [id, entry, delivery] of found) {
        if (entry && delivery && entry.recordIds[0] === delivery.recordId) whole.add(id);
        else if (entry || delivery) partial.push(id);
      }
    }
    return { whole, partial, listed: listed.length };
  } finally {
    await store.stop();
  }
}

describe.each(ENGINES)('store under kill -9 on %s', (engine) => {
  it('loses no acknowledged event and writes none in part, across several crashes', async () => {
    const { at, cleanup } = await freshStoreAt(engine);
    cleanups.push(cleanup);
    const acknowledged = new Set<string>();
    const runs = new Map<string, number>();
    for (const run of ['r1', 'r2', 'r3', 'r4']) {
      // The kill lands wherever the writer is then: the reader's timing and the random count decide.
      const acked = await runAndKill(at, run, 50 + Math.floor(Math.random() * 350));
      for (const id of acked) acknowledged.add(id);
      runs.set(run, Math.max(0, ...acked.map((id) => Number(id.split(':')[1]))));

      const { whole, partial, listed } = await readBack(at, runs);
      expect(partial).toEqual([]);
      expect([...acknowledged].filter((id) => !whole.has(id))).toEqual([]);
      // Nothing beyond what was read back: every queued delivery belongs to an event found whole.
      expect(listed).toBe(whole.size);
    }
    expect(acknowledged.size).toBeGreaterThanOrEqual(200);
  });
});
