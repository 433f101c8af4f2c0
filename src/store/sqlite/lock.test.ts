import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/temp.js';
import { refuseOldFormat } from '../old-format.js';
import { acquireLock, liveHolder } from './lock.js';
import { createSqliteStore } from './sqlite-store.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dir(): Promise<string> {
  const made = await tempDir('sb-lock-');
  cleanups.push(made.cleanup);
  return made.dir;
}

/** A child process that takes the lock, says so, and waits to be killed. */
function holder(where: string): Promise<{ kill(): Promise<void> }> {
  const code = `import { acquireLock } from ${JSON.stringify(path.join(import.meta.dirname, 'lock.ts'))};
    await acquireLock(${JSON.stringify(where)}); process.stdout.write('held\\n'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () =>
      resolve({
        kill: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      }),
    );
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
  });
}

describe('the embedded store\'s lock', () => {
  it('is held by one process; a second is told who holds it; the lock of a process killed with -9 is free at once', async () => {
    const where = await dir();
    const other = await holder(where);
    expect(await liveHolder(where)).toMatchObject({ pid: expect.any(Number) });
    await expect(acquireLock(where)).rejects.toMatchObject({ code: 'store.locked', message: expect.stringMatching(/held by process \d+ on /) });
    await other.kill();
    // Whatever host name it left in the holder file: the kernel released its lock with the process.
    await writeFile(path.join(where, 'schoolbridge.holder.json'), JSON.stringify({ pid: 1, host: 'a-container-that-is-gone', startedAt: 'then' }));
    expect(await liveHolder(where)).toBeUndefined();
    const mine = await acquireLock(where);
    mine.release();
  });

  it('two stores in one process cannot hold one directory', async () => {
    const where = await dir();
    const log = pino({ level: 'silent' });
    const first = createSqliteStore({ dir: where, log });
    await first.start();
    cleanups.push(() => first.stop());
    await expect(createSqliteStore({ dir: where, log }).start()).rejects.toMatchObject({ code: 'store.locked' });
    expect(await liveHolder(where)).toMatchObject({ pid: process.pid });
  });

  it('finds no holder in a directory with no lock file, and leaves none there', async () => {
    const where = await dir();
    expect(await liveHolder(where)).toBeUndefined();
    expect(await readdir(where)).toEqual([]);
  });

  it('refuses a directory of the old write-ahead-log store with a one-line error saying what to do', async () => {
    const where = await dir();
    await writeFile(path.join(where, 'wal-00000001.log'), '');
    await expect(refuseOldFormat(where)).rejects.toMatchObject({ code: 'store.old_format', message: expect.stringContaining('move the directory away') });
    await expect(createSqliteStore({ dir: where, log: pino({ level: 'silent' }) }).start()).rejects.toMatchObject({ code: 'store.old_format' });
    const error = await refuseOldFormat(where).catch((e: Error) => e);
    expect((error as Error).message).not.toContain('\n');
  });
});
