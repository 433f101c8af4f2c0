import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { startingApp } from './support/starting-app.js';
import { tempDir } from './support/temp.js';

/** What a new user sees when the daemon cannot start: one line naming the fix, and nothing started behind it. */
const BIN = path.resolve('bin/schoolbridge.js');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function takenPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

function run(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: options.cwd, env: { ...process.env, SCHOOLBRIDGE_CONFIG: '', ...options.env } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('start-up failures', () => {
  it('a store.dir of the old format is refused as found, nothing written into it, and one that holds the new database is not', async () => {
    const { dir, cleanup } = await tempDir('sb-old-');
    cleanups.push(cleanup);
    const data = path.join(dir, 'data');
    await mkdir(data);
    await writeFile(path.join(data, 'wal-00000001.log'), '');
    const config = configSchema.parse({ sandbox: { students: 3 }, store: { dir: data } });
    await expect(createApp({ config, log: pino({ level: 'silent' }), mode: 'oneshot' })).rejects.toMatchObject({ code: 'store.old_format' });
    // The embedded sandbox did not keep its school there first.
    expect(await readdir(data)).toEqual(['wal-00000001.log']);
    // A database of this version beside a stray old file: this version has run here.
    await writeFile(path.join(data, 'schoolbridge.db'), '');
    const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'oneshot' });
    await app.start();
    await app.stop();
  });


  it('a port in use stops the start before any poll or export has run, naming server.port', async () => {
    const { dir, cleanup } = await tempDir('sb-port-');
    cleanups.push(cleanup);
    const { app, cycles } = await startingApp(dir, await takenPort());
    await expect(app.start()).rejects.toMatchObject({ code: 'server.port_in_use', message: expect.stringMatching(/server\.port \(SCHOOLBRIDGE_PORT/) });
    await app.stop();
    expect(cycles).toEqual([]);
    expect(app.sandbox!.control.requestCount('GET', '/api/v2/students')).toBe(0);
  });

  it('a sandbox.json that is JSON but not a school is refused naming the file', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-doc-');
    cleanups.push(cleanup);
    const data = path.join(dir, 'data');
    await mkdir(data);
    await writeFile(path.join(data, 'sandbox.json'), '{"format":1,"seed":1,"students":3,"random":1,"school":"x"}');
    const config = configSchema.parse({ sandbox: { students: 3 }, store: { dir: data } });
    await expect(createApp({ config, log: pino({ level: 'silent' }), mode: 'oneshot' })).rejects.toMatchObject({
      code: 'sandbox.document_unreadable',
      message: expect.stringMatching(new RegExp(`^${path.join(data, 'sandbox.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the sandbox's saved school cannot be restored \\(`)) as unknown,
    });
  });

  it('a port in use by the embedded sandbox names sandbox.port', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-port-');
    cleanups.push(cleanup);
    const port = await takenPort();
    const config = configSchema.parse({ sandbox: { students: 3, port }, store: { dir: path.join(dir, 'data') } });
    await expect(createApp({ config, log: pino({ level: 'silent' }), mode: 'oneshot' })).rejects.toMatchObject({
      code: 'sandbox.port_in_use',
      message: `cannot listen on 127.0.0.1:${port}: another process uses the port; stop it, or choose another with sandbox.port (0: any free port)`,
    });
  });

  it('on the command line: the error once, as the last line, with no poll, export or stack trace before it', async () => {
    const { dir, cleanup } = await tempDir('sb-port-cli-');
    cleanups.push(cleanup);
    const port = await takenPort();
    const { code, stderr } = await run(['start'], { cwd: dir, env: { SCHOOLBRIDGE_PORT: String(port) } });
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(`schoolbridge: cannot listen on 127.0.0.1:${port}: another process uses the port; stop it, or choose another with server.port (SCHOOLBRIDGE_PORT in the embedded default)`);
    expect(stderr.match(/cannot listen/g)).toHaveLength(1);
    expect(stderr).not.toMatch(/poll|roster|export/);
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('a YAML syntax error is reported once, with its line and a caret, and exit 2', async () => {
    const { dir, cleanup } = await tempDir('sb-yaml-');
    cleanups.push(cleanup);
    const config = path.join(dir, 'schoolbridge.yaml');
    await writeFile(config, (await readFile('config/default.yaml', 'utf8')).replace('  port: ${SCHOOLBRIDGE_PORT:-8080}', '  port: [8080'));
    const { code, stderr } = await run(['-c', config, 'start'], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr.match(/not valid YAML/g)).toHaveLength(1);
    expect(stderr).toMatch(/not valid YAML at line \d+, column \d+: .*\n(.*\|.*\n)+\s+\| +\^/);
  });
  it.each(['start', 'sync', 'deliveries list', 'webhooks list'])(
    'store.dir taken by a file: %s says so in one line naming store.dir, exit 1',
    async (command) => {
      const { dir, cleanup } = await tempDir('sb-dir-file-');
      cleanups.push(cleanup);
      await writeFile(path.join(dir, 'data'), 'not a directory');
      const { code, stderr } = await run(command.split(' '), { cwd: dir, env: { SCHOOLBRIDGE_DATA_DIR: path.join(dir, 'data') } });
      expect(code, stderr).toBe(1);
      expect(stderr.trim().split('\n').at(-1)).toBe(`schoolbridge: store.dir: cannot make the directory ${path.join(dir, 'data')}: it exists and is not a directory; set store.dir to a directory`);
    },
  );
});
