import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  it('passes SIGTERM on to the daemon, which stops and leaves npm exiting 0', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-npm-start-');
    cleanups.push(cleanup);
    // The embedded default, its files in the temp dir.
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: process.cwd(),
      env: { ...process.env, SCHOOLBRIDGE_CONFIG: '', SCHOOLBRIDGE_DATA_DIR: path.join(dir, 'data'), SCHOOLBRIDGE_PORT: String(port) },
      stdio: 'ignore',
    });
    children.push(npm);
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    await eventually(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok ? true : undefined), 20_000, '/healthz');
    const lock = JSON.parse(await readFile(path.join(dir, 'data', 'schoolbridge.holder.json'), 'utf8')) as { pid: number };
    expect(lock.pid).not.toBe(npm.pid);
    cleanups.unshift(async () => {
      if (alive(lock.pid)) process.kill(lock.pid, 'SIGKILL');
    });

    npm.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The daemon itself is gone, not orphaned behind npm.
    await eventually(() => (alive(lock.pid) ? undefined : true), 10_000, `daemon pid ${lock.pid} to exit`);
  }, 60_000);
});
