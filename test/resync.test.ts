import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { awaitDeliveries } from '../src/cli/context.js';
import { configSchema, type Config } from '../src/config/index.js';
import { tempDir } from './support/temp.js';

/** `schoolbridge resync`: the current snapshot to one connector, idempotent by state. */
const BIN = path.resolve('bin/schoolbridge.js');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Line = { id: string; op: string; key: number; stream: string; record: { id: number } };
const lines = async (file: string): Promise<Line[]> => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);

async function setup(): Promise<{ dir: string; config: (names: string[]) => Config; open: (config: Config) => Promise<App> }> {
  const { dir, cleanup } = await tempDir('sb-resync-');
  cleanups.push(cleanup);
  const config = (names: string[]) =>
    configSchema.parse({
      sandbox: { students: 4 },
      poll: { onStart: false },
      store: { dir: path.join(dir, 'data') },
      connectors: names.map((name) => ({ name, type: 'file', streams: name === 'sheet' ? ['students'] : ['students', 'users'], dir: path.join(dir, name) })),
    });
  const open = async (config: Config) => {
    const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'oneshot' });
    await app.start();
    cleanups.push(() => app.stop());
    return app;
  };
  return { dir, config, open };
}

describe('resync', () => {
  it('sends the snapshot to a connector added later, once per state', async () => {
    const { dir, config, open } = await setup();
    const first = await open(config(['files']));
    await first.poll.sync();
    await awaitDeliveries(first);
    const control = first.sandbox!.control;
    control.updateStudent(control.students()[0]!.id, { city: 'Sopot' });
    await first.poll.sync();
    await awaitDeliveries(first);
    await first.stop();

    // A connector added afterwards: everything as it is now, as created changes.
    const app = await open(config(['files', 'archive']));
    const progress: unknown[] = [];
    const result = await app.resync({ connector: 'archive' }, (p) => progress.push({ ...p }));
    await awaitDeliveries(app);
    const students = await lines(path.join(dir, 'archive', 'students.jsonl'));
    const users = await lines(path.join(dir, 'archive', 'users.jsonl'));
    expect(result).toEqual({ connector: 'archive', streams: { students: { records: 4, enqueued: 4 }, users: { records: users.length, enqueued: users.length } } });
    // What the command shows as its progress line, stream by stream, up to the whole snapshot.
    expect(progress.at(-1)).toMatchObject({ stream: 'users', read: users.length, total: users.length, enqueued: users.length });
    expect(progress).toContainEqual(expect.objectContaining({ stream: 'students', read: 4, total: 4, enqueued: 4 }));
    expect(students.map((r) => r.op)).toEqual(['created', 'created', 'created', 'created']);
    const now = app.sandbox!.control.students();
    expect(students.map((r) => r.record)).toEqual(now);
    // The ids follow the state: the moved student's is its update's id; the others their first cycle's.
    const original = await lines(path.join(dir, 'files', 'students.jsonl'));
    const lastIdOf = (key: number) => original.filter((r) => r.key === key).at(-1)!.id;
    expect(students.map((r) => r.id)).toEqual(students.map((r) => lastIdOf(r.key)));

    // Again: the same ids, nothing new in the files; the original connector holds them all already.
    await app.resync({ connector: 'archive' });
    await app.resync({ connector: 'files' });
    await awaitDeliveries(app);
    expect(await lines(path.join(dir, 'archive', 'students.jsonl'))).toEqual(students);
    expect(await lines(path.join(dir, 'files', 'students.jsonl'))).toEqual(original);
  });

  it('checks the connector and streams, naming the fix', async () => {
    const { config, open } = await setup();
    const app = await open(config(['files', 'sheet']));
    await expect(app.resync({ connector: 'nope' })).rejects.toMatchObject({ code: 'resync.not_found', message: 'no connector "nope" in the config (connectors: files, sheet)' });
    await expect(app.resync({ connector: 'sheet', streams: ['users'] })).rejects.toMatchObject({ code: 'resync.invalid_stream', message: 'connector "sheet" does not take "users" (it takes students)' });
    // A stream the connector takes but no poll keeps: named as that, not as one it does not take.
    await expect(app.resync({ connector: 'files', streams: ['invoices'] })).rejects.toMatchObject({
      code: 'resync.invalid_stream',
      message: expect.stringMatching(/^"invoices" is not a polled stream: resync sends the snapshot of students, users.* \(the roster: export roster; webhook events are not kept as a snapshot\)$/) as unknown,
    });
    expect(await app.resync({ connector: 'sheet' })).toEqual({ connector: 'sheet', streams: { students: { records: 0, enqueued: 0 } } });
  });

  it('is a command: in-process, it delivers before it exits', async () => {
    const { dir, config, open } = await setup();
    const app = await open(config(['files']));
    await app.poll.sync();
    await awaitDeliveries(app);
    await app.stop();
    const file = path.join(dir, 'config.json');
    await writeFile(file, JSON.stringify({ ...config(['files', 'late']), log: { level: 'warn' } }));
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [BIN, '-c', file, 'resync', '--connector', 'late', '--stream', 'students'], (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })),
    );
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'students: 4 records, 4 enqueued for late\n' });
    expect(await lines(path.join(dir, 'late', 'students.jsonl'))).toHaveLength(4);
    expect(await lines(path.join(dir, 'late', 'users.jsonl'))).toEqual([]);
  });
});
