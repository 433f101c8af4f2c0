import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/**
 * A command against a PostgreSQL database that does not answer waits for it, as the daemon does
 * (a database container may still be starting): every command says so at once, the read-only ones
 * too, rather than staying silent until it gives up.
 */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs the command and resolves with its stderr once a line says it waits; rejects if it exits first. */
async function waitingLine(config: string, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, '-c', config, ...args], { cwd: path.dirname(config), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  cleanups.push(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/does not answer yet/.test(stderr)) resolve(stderr);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before saying it waits: ${stderr}`)));
  });
}

describe('a command while PostgreSQL does not answer', () => {
  it.each(['deliveries list', 'events quarantine list', 'deliveries retry --all-dead'])('%s says at once that it waits, and for how long', async (command) => {
    const { dir, cleanup } = await tempDir('schoolbridge-waits-');
    cleanups.push(cleanup);
    // A port nothing listens on: each connection is refused at once.
    const config = path.join(dir, 'config.yaml');
    // store.dir as well: the embedded sandbox keeps its school there, on postgres too.
    await writeFile(config, `store:\n  driver: postgres\n  url: postgres://app:s3cret@127.0.0.1:${await freePort()}/school\n  dir: ${JSON.stringify(path.join(dir, 'data'))}\nlog:\n  pretty: false\n`);
    const stderr = await waitingLine(config, command.split(' '));
    expect(stderr).toMatch(/PostgreSQL does not answer yet; waiting up to 30 s/);
    expect(stderr).toMatch(/ECONNREFUSED/);
    expect(stderr).not.toMatch(/s3cret/);
  });
});
