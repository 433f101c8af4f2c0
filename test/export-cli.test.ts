import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/temp.js';

/**
 * `export roster` in-process waits for the roster's deliveries: one a connector could not take is
 * named with its error, stays queued, and the command exits 1; one delivered says so and exits 0.
 */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
let dir: { dir: string; cleanup(): Promise<void> };

async function configAt(name: string, out: string, streams = 'roster'): Promise<string> {
  const file = path.join(dir.dir, `${name}.yaml`);
  await writeFile(file, [
    'upstream: { baseUrl: sandbox }',
    'sandbox: { students: 4, activity: false }',
    'webhooks: { events: [] }',
    `store: { dir: ${JSON.stringify(path.join(dir.dir, name))} }`,
    'delivery: { backoff: { baseMs: 60000, maxMs: 60000 } }',
    'connectors:',
    `  - { name: files, type: file, streams: [${streams}], dir: ${JSON.stringify(out)} }`,
  ].join('\n'));
  return file;
}

function cli(config: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', config, ...args], { env: { ...process.env, NODE_NO_WARNINGS: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dir = await tempDir('schoolbridge-export-');
});

afterAll(async () => {
  await dir.cleanup();
});

describe('export roster', () => {
  it('exits 1 naming the connector and its error when the roster could not be delivered; it stays queued', async () => {
    // A file where the connector's directory should be: the roster cannot be written.
    await writeFile(path.join(dir.dir, 'blocked'), 'not a directory');
    const config = await configAt('failing', path.join(dir.dir, 'blocked', 'out'));
    const result = await cli(config, 'export', 'roster');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^roster \d{4}-\d{2}-\d{2}: 4 students, not delivered to files \(roster:/);
    expect(result.stderr).toMatch(/^the roster was not delivered to: files, to be tried again \(file\.write_failed: [^\n]+\)\n$/);
    const listed = await cli(config, 'deliveries', 'list', '--json');
    expect(JSON.parse(listed.stdout)).toMatchObject([{ connector: 'files', status: 'pending', lastError: expect.stringContaining('file.write_failed') }]);
    // The same roster again the same day is not sent again; it is still owed, and the command says so.
    const again = await cli(config, 'export', 'roster');
    expect(again.code, again.stderr).toBe(1);
    expect(again.stdout).toMatch(/^roster \d{4}-\d{2}-\d{2}: 4 students, unchanged since the last export today \(not sent again\); not delivered to files \(roster:/);
    expect(again.stderr).toMatch(/^the roster was not delivered to: files, to be tried again \(file\.write_failed: /);
  }, 60_000);

  it('says delivered and exits 0 when it was', async () => {
    const out = path.join(dir.dir, 'out');
    await mkdir(out);
    const result = await cli(await configAt('working', out), 'export', 'roster');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^roster \d{4}-\d{2}-\d{2}: 4 students, delivered \(roster:/);
    expect((await readdir(out)).filter((name) => name.startsWith('roster-'))).toHaveLength(1);
  }, 60_000);

  it('exits 1 when no connector takes the roster: it went nowhere', async () => {
    const out = path.join(dir.dir, 'students-only');
    await mkdir(out);
    const result = await cli(await configAt('nowhere', out, 'students'), 'export', 'roster');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^roster \d{4}-\d{2}-\d{2}: 4 students, not sent: no connector takes the roster stream/);
    expect(result.stderr).toBe("the roster went nowhere: no connector takes the roster stream (add roster to a connector's streams)\n");
  }, 60_000);
});
