import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../src/store/index.js';
import { silentLogger } from '../src/log.js';
import { tempDir } from './support/temp.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Runs the writer until it has acknowledged `atLeast` commits, then SIGKILLs it; returns what it acknowledged. */
function runAndKill(dir: string, atLeast: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/store-writer.ts', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked: number[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) acked.push(Number(line));
      if (acked.length >= atLeast && !child.killed) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`writer exited without being killed (${signal})`))));
  });
}

describe('store under kill -9', () => {
  it('loses no acknowledged commit and stays readable, across several crashes and checkpoints', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const acknowledged = new Set<number>();
    // Kill points vary from run to run: the writer runs flat out and is killed by the reader's timing.
    for (const atLeast of [150, 400, 900]) {
      for (const i of await runAndKill(dir, atLeast)) acknowledged.add(i);
      const store = createStore({ dir, log: silentLogger() });
      await store.start();
      const missing = [...acknowledged].filter((i) => !store.has('acked', String(i)));
      expect(missing).toEqual([]);
      await store.stop();
    }
    expect(acknowledged.size).toBeGreaterThanOrEqual(1450);
  });
});
