import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';
import { readImageSpec } from './dockerfile.js';
import { runImage, type Container } from './run.js';

/**
 * What the image does, run without Docker (run.ts): as its non-root user, with /app read-only and the
 * volume the only writable path. `docker run -v sb:/data IMAGE` runs the embedded default; a config
 * mounted at /app/config/schoolbridge.yaml runs production; the healthcheck tells "cannot work" from
 * "waiting for the upstream"; `docker stop` (SIGTERM to PID 1) stops it cleanly.
 */
const spec = readImageSpec();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function container(options: { env?: Record<string, string>; files?: Record<string, string> } = {}): Promise<{ box: Container; volume: string; dir: string }> {
  const { dir, cleanup } = await tempDir('sb-image-');
  cleanups.push(cleanup);
  const volume = path.join(dir, 'volume');
  const box = await runImage(spec, path.join(dir, 'root'), { volume, ...options });
  cleanups.push(() => box.kill());
  return { box, volume, dir };
}

/** GET inside the container (its loopback is its own). */
async function get(box: Container, route: string): Promise<{ status: number; body: string }> {
  const { stdout } = await box.exec(['node', '-e', `fetch('http://127.0.0.1:8080${route}').then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })), (e) => console.log(JSON.stringify({ status: 0, body: String(e) })))`]);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { status: number; body: string };
}

async function until<T>(probe: () => Promise<T | undefined>, box: Container, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the container said:\n${box.output().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The listening sockets of the container's network namespace, as `address:port` (IPv4, hex in /proc). */
async function listening(box: Container): Promise<string[]> {
  const { stdout } = await box.exec(['cat', '/proc/net/tcp']);
  return stdout.split('\n').slice(1).map((line) => line.trim().split(/\s+/)).filter((f) => f[3] === '0A').map((f) => {
    const [address, port] = f[1]!.split(':');
    const ip = address!.match(/../g)!.reverse().map((h) => Number.parseInt(h, 16)).join('.');
    return `${ip}:${Number.parseInt(port!, 16)}`;
  });
}

describe('the image, run as it is built', () => {
  it('runs the embedded default on its defaults: state and files under /data, every interface, a clean stop', async () => {
    const { box, volume } = await container();
    await until(async () => ((await get(box, '/healthz')).status === 200 ? true : undefined), box, '/healthz');
    expect(await listening(box)).toContain('0.0.0.0:8080');
    await until(async () => ((await readFile(path.join(volume, 'out', 'students.jsonl'), 'utf8').catch(() => '')).length > 0 || undefined), box, 'the first records');
    expect((await readdir(volume)).sort()).toEqual(expect.arrayContaining(['out', 'sandbox.json', 'schoolbridge.db', 'schoolbridge.holder.json', 'schoolbridge.lock']));
    expect(await box.exec(spec.healthcheck)).toMatchObject({ code: 0, stdout: '200 {"status":"ok"}\n' });
    expect(box.output()).toMatch(/schoolbridge is running: status page http:\/\/127\.0\.0\.1:8080\//);
    // docker stop: SIGTERM to PID 1 (tini), which passes it on; the daemon stops cleanly.
    expect(await box.stop()).toEqual({ code: 0, signal: null });
  });

  it('runs production from a config mounted at /app/config/schoolbridge.yaml, healthy while the upstream is away', async () => {
    const { dir, cleanup } = await tempDir('sb-image-config-');
    cleanups.push(cleanup);
    const env = { SCHOOLBRIDGE_CLIENT_ID: 'id', SCHOOLBRIDGE_CLIENT_SECRET: 'secret', SCHOOLBRIDGE_SPREADSHEET_ID: 'sheet', SCHOOLBRIDGE_ACCOUNTING_SECRET: 'books' };
    const config = path.join(dir, 'schoolbridge.yaml');
    await writeFile(config, await readFile('config/example.production.yaml', 'utf8'));
    const { box, volume } = await container({ env, files: { [config]: '/app/config/schoolbridge.yaml' } });
    await until(async () => ((await get(box, '/healthz')).status === 200 ? true : undefined), box, '/healthz');
    // The server answers while the daemon starts; the line that names the config comes once it has.
    await until(async () => (box.output().includes('schoolbridge is running') ? true : undefined), box, 'the line saying it runs');
    expect(box.output()).toContain('"config":"/app/config/schoolbridge.yaml"');
    expect(await readdir(volume)).toEqual(expect.arrayContaining(['schoolbridge.db']));
    // The example's upstream cannot be reached from here: not ready, yet healthy (nothing to fix in it).
    await until(async () => ((await get(box, '/readyz')).body.includes('last upstream call failed') ? true : undefined), box, 'a failed upstream call');
    expect(await box.exec(spec.healthcheck)).toMatchObject({ code: 0 });
    expect(await box.stop()).toEqual({ code: 0, signal: null });
  });

  it('is unhealthy when the upstream refuses the credentials', async () => {
    const { dir, cleanup } = await tempDir('sb-image-auth-');
    cleanups.push(cleanup);
    // The upstream: a sandbox in the container with other credentials than the config's.
    const config = path.join(dir, 'schoolbridge.yaml');
    await writeFile(config, [
      'upstream: { baseUrl: "http://127.0.0.1:8090", clientId: school, clientSecret: wrong }',
      'server: { host: 0.0.0.0, port: 8080 }',
      'webhooks: { events: [] }',
      'poll: { schedule: "*/2 * * * * *", onStart: true }',
      'store: { dir: /data }',
    ].join('\n'));
    const { box } = await container({ files: { [config]: '/app/config/schoolbridge.yaml' } });
    const upstream = box.exec(['/usr/bin/tini', '-s', '--', 'node', '/app/bin/schoolbridge.js', 'sandbox', '--client-id', 'school', '--client-secret', 'right', '--students', '2']);
    cleanups.push(async () => void (await box.stop().catch(() => undefined), await upstream));
    const failing = await until(async () => {
      const result = await box.exec(spec.healthcheck);
      return result.stdout.startsWith('503 ') ? result : undefined;
    }, box, 'the healthcheck to fail');
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/the credentials are refused/);
  });

  it('names store.dir when the data directory cannot be written', async () => {
    const { box } = await container({ env: { SCHOOLBRIDGE_DATA_DIR: '/app/data' } });
    expect((await box.exited).code).toBe(1);
    expect(box.output()).toMatch(/schoolbridge: store\.dir: cannot write to \/app\/data: the file system is read-only; make it writable for this user, or set store\.dir to a directory that is\n$/);
  });
});
