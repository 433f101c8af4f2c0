import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandOf } from '../src/cli/early-signals.mjs';
import { accepts, eventually, freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/**
 * `docker stop` or Ctrl-C may come at any moment of the start, also once the server listens and
 * the rest is still starting: the daemon then stops cleanly (exit 0), never dies of the signal.
 */
const BIN = path.resolve('bin/schoolbridge.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a daemon says when another process took its port between freePort() and its listen. */
const PORT_TAKEN = /another process uses the port/;

/**
 * Starts the daemon on a port that was free a moment ago, runs `signal` as soon as the port accepts,
 * and resolves with how the daemon exited. Tests run side by side: when another process took the
 * port meanwhile, what accepted was not the daemon, which then fails its listen saying so; that run
 * proves nothing and is made again on another port, up to three times.
 */
async function signalOnListen(prefix: string, signal: (child: ChildProcess, stderr: () => string) => Promise<void>) {
  for (let attempt = 1; ; attempt++) {
    const { dir, cleanup } = await tempDir(prefix);
    cleanups.push(cleanup);
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'start'], {
      env: { ...process.env, SCHOOLBRIDGE_CONFIG: '', SCHOOLBRIDGE_DATA_DIR: path.join(dir, 'data'), SCHOOLBRIDGE_PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, s) => resolve({ code, signal: s })));
    // Its first log line comes after its signal handlers are in (start.ts): a signal before them
    // would kill it, which says nothing when what accepted was another process on the port.
    while (stderr === '' || !(await accepts(port))) {
      if (child.exitCode !== null) throw new Error(`the daemon exited before it listened: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await signal(child, () => stderr);
    const exit = await exited;
    if (exit.code !== 0 && PORT_TAKEN.test(stderr) && attempt < 3) continue;
    return { exit, stderr };
  }
}

describe('start', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('stops cleanly on %s sent as soon as the server listens', async (signal) => {
    const { exit, stderr } = await signalOnListen('sb-start-signal-', async (child) => void child.kill(signal));
    expect(exit, stderr.slice(-1500)).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"msg":"stopped"/);
  });

  it('stops cleanly on one Ctrl-C under npm start: SIGINT from the terminal and again from npm', async () => {
    const { exit, stderr } = await signalOnListen('sb-start-echo-', async (child, stderr) => {
      child.kill('SIGINT');
      // The second once the first has been taken (two pending SIGINTs would be delivered as one), as
      // npm passes it on: at once.
      await new Promise<void>((resolve) => {
        const taken = () => (stderr().includes('"msg":"stopping"') || child.exitCode !== null) && (child.stderr!.off('data', taken), resolve());
        child.stderr!.on('data', taken);
        child.once('exit', taken);
        taken();
      });
      child.kill('SIGINT');
    });
    expect(exit, stderr.slice(-1500)).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"msg":"stopped"/);
    expect(stderr).not.toMatch(/second signal/);
  });

  it('exits 0 on a SIGTERM that comes before its own handlers are in', async () => {
    const { dir, cleanup } = await tempDir('sb-early-signal-');
    try {
      // The config is a FIFO: reading it holds the start before the daemon's handlers go in, for as
      // long as the test likes, and a signal sent then finds only the early ones.
      const config = path.join(dir, 'config.yaml');
      execFileSync('mkfifo', [config]);
      const child = spawn(process.execPath, [BIN, '-c', config, 'start'], { stdio: ['ignore', 'ignore', 'pipe'] });
      // Whatever the test finds, no process is left waiting on the FIFO.
      cleanups.push(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      // It cannot get past reading its config: once it waits for the FIFO's writer (the kernel says
      // so where it can), or a while later in any case, it is past the early handlers and short of its own.
      const waiting = async () => ((await readFile(`/proc/${child.pid}/wchan`, 'utf8').catch(() => '')).includes('partner') ? true : undefined);
      await eventually(waiting, 3000, 'the start waiting for its config').catch(() => undefined);
      child.kill('SIGTERM');
      // Its config arrives after the signal: the start goes no further. (Opened for reading and
      // writing, a FIFO opens at once on Linux, also when no one is left to read it.)
      const fifo = await open(config, constants.O_RDWR);
      await fifo.writeFile(`upstream: { baseUrl: sandbox }\nstore: { dir: ${JSON.stringify(path.join(dir, 'data'))} }\n`);
      await fifo.close();
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      await cleanup();
    }
  });

  it('is the command that the early handlers are for, whatever options come before it', () => {
    expect(commandOf(['start'])).toBe('start');
    expect(commandOf(['-c', 'start', 'sync'])).toBe('sync');
    expect(commandOf(['--config', 'x.yaml', '--verbose', 'start'])).toBe('start');
    expect(commandOf(['resync', '--connector', 'start'])).toBe('resync');
    expect(commandOf(['--version'])).toBeUndefined();
  });
});
