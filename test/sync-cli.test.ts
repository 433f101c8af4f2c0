import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/** `sync` prints its cycle's result itself: a failed one is said once on stdout and once on stderr. */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
let dir: { dir: string; cleanup(): Promise<void> };

beforeAll(async () => {
  dir = await tempDir('schoolbridge-sync-');
});
afterAll(async () => {
  await dir.cleanup();
});

describe('sync', () => {
  it('fails with the cycle line on stdout and the reason on stderr, no log line saying it a third time', async () => {
    const port = await freePort();
    const config = path.join(dir.dir, 'config.yaml');
    await writeFile(config, [
      `upstream: { baseUrl: "http://127.0.0.1:${port}", clientId: a, clientSecret: b }`,
      `store: { dir: ${JSON.stringify(path.join(dir.dir, 'data'))} }`,
      'log: { pretty: false }',
    ].join('\n'));
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, '-c', config, 'sync'], (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^poll cycle failed after \d+ ms: upstream\.network: [^\n]+\n$/);
    const errors = result.stderr.split('\n').filter((line) => line !== '' && !line.includes('"level":40'));
    expect(errors).toEqual([expect.stringMatching(/^sync failed: upstream\.network: /)]);
  }, 30_000);
});
