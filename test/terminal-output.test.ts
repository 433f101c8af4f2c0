import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/**
 * What `npm start` shows on a terminal (`log.pretty: true` is what a terminal gets): one line per
 * event — a start-up line with the status page's address, one line per poll cycle with its counts,
 * a line when records were delivered — and none of the simulator's own activity.
 */
const BIN = path.resolve('bin/schoolbridge.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the terminal', () => {
  it('shows one line per event, with what matters in it', async () => {
    const { dir, cleanup } = await tempDir('sb-terminal-');
    cleanups.push(cleanup);
    const port = await freePort();
    await writeFile(path.join(dir, 'config.yaml'), [
      'upstream: { baseUrl: sandbox }',
      'sandbox: { students: 5, activity: true, activityIntervalMs: 100, retryTimeScale: 0.001 }',
      `server: { host: 127.0.0.1, port: ${port} }`,
      'poll: { schedule: "0 0 1 1 *", onStart: true }',
      'export: { onStart: true }',
      `store: { dir: ${JSON.stringify(path.join(dir, 'data'))} }`,
      'log: { pretty: true }',
      'connectors:',
      `  - { name: files, type: file, streams: [students, users, invoices, roster], dir: ${JSON.stringify(path.join(dir, 'out'))} }`,
    ].join('\n'));
    const child = spawn(process.execPath, [BIN, '-c', path.join(dir, 'config.yaml'), 'start'], { stdio: ['ignore', 'ignore', 'pipe'] });
    cleanups.push(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The sandbox's activity makes invoices; their delivery is a line of its own.
    await eventually(() => (/delivered to files: .*invoices/.test(stderr) ? true : undefined), 60_000, () => `an invoice delivered (${stderr.slice(-800)})`);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const lines = stderr.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] (INFO|WARN|ERROR): \S/);
    expect(lines.filter((line) => line.includes(`schoolbridge is running: status page http://127.0.0.1:${port}/`))).toHaveLength(1);
    expect(lines.filter((line) => line.includes('poll: poll cycle done'))[0]).toMatch(/poll cycle done in \d+\.\d s: students \d+ \(\d+ created\), users \d+ \(\d+ created\)$/);
    expect(stderr).toMatch(/INFO: outbox: delivered to files: (.*, )?\d+ students(, |$)/m);
    expect(stderr).not.toMatch(/sandbox activity|webhook delivery attempt|sandbox listening/);
  }, 90_000);
});
