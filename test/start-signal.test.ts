import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';
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

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops cleanly on %s sent as soon as the server listens', async (signal) => {
    const { dir, cleanup } = await tempDir('sb-start-signal-');
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
    while (!(await accepts(port))) {
      if (child.exitCode !== null) throw new Error(`the daemon exited before it listened: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill(signal);
    expect(await exited, stderr.slice(-1500)).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"msg":"stopped"/);
  });

  it('stops cleanly on one Ctrl-C under npm start: SIGINT from the terminal and again from npm', async () => {
    const { dir, cleanup } = await tempDir('sb-start-echo-');
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
    while (!(await accepts(port))) {
      if (child.exitCode !== null) throw new Error(`the daemon exited before it listened: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGINT');
    // The second once the first has been taken (two pending SIGINTs would be delivered as one), as
    // npm passes it on: at once.
    await new Promise<void>((resolve) => {
      const taken = () => stderr.includes('"msg":"stopping"') && (child.stderr!.off('data', taken), resolve());
      child.stderr!.on('data', taken);
      taken();
    });
    child.kill('SIGINT');
    expect(await exited, stderr.slice(-1500)).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"msg":"stopped"/);
    expect(stderr).not.toMatch(/second signal/);
  });
});
