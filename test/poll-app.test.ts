import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { awaitDeliveries } from '../src/cli/context.js';
import { configSchema } from '../src/config/schema.js';
import type { CycleResult } from '../src/poll/index.js';
import { tempDir } from './support/temp.js';

/**
 * The poll part wired into the app: sync and roster export through the real outbox to the
 * file connector, /readyz's `poll` check after an aborted cycle, and the daemon's start-up cycle.
 */
const log = pino({ level: 'silent' });
let dir: { dir: string; cleanup(): Promise<void> };
let app: App | undefined;

function config(patch: Record<string, unknown> = {}) {
  return configSchema.parse({
    upstream: { baseUrl: 'sandbox' },
    sandbox: { students: 6, seed: 3 },
    server: { port: 0 },
    webhooks: { reconcileOnStart: false },
    store: { dir: path.join(dir.dir, 'store') },
    connectors: [{ name: 'files', type: 'file', streams: ['students', 'users', 'roster'], dir: path.join(dir.dir, 'out') }],
    ...patch,
  });
}

const lines = async (file: string) => (await readFile(path.join(dir.dir, 'out', file), 'utf8')).trim().split('\n');

beforeEach(async () => {
  dir = await tempDir('schoolbridge-poll-app-');
});

afterEach(async () => {
  await app?.stop();
  app = undefined;
  await dir.cleanup();
});

describe('poll in the app', () => {
  it('sync delivers changes to the file connector; export roster writes the CSV', async () => {
    app = await createApp({ config: config(), log, mode: 'oneshot' });
    await app.start();
    expect(app.poll.scheduler).toBeUndefined();
    expect((await app.poll.sync()).outcome).toBe('ok');
    await awaitDeliveries(app); // what `schoolbridge sync` waits for: the first cycle's backlog, then the deliveries
    expect(await lines('students.jsonl')).toHaveLength(6);
    expect(await lines('users.jsonl')).toHaveLength(app.sandbox!.control.users().length);

    const student = app.sandbox!.control.students()[2]!;
    app.sandbox!.control.updateStudent(student.id, { city: 'Sopot' });
    await app.poll.sync();
    await awaitDeliveries(app);
    const last = JSON.parse((await lines('students.jsonl')).at(-1)!);
    expect(last).toMatchObject({ stream: 'students', op: 'updated', key: student.id });
    expect(last.changes).toContainEqual({ path: 'user.additionalData.city', from: student.user.additionalData.city, to: 'Sopot' });

    const exported = await app.poll.exportRoster();
    expect(exported).toMatchObject({ outcome: 'ok', rows: 6, enqueued: true });
    await awaitDeliveries(app);
    const csv = await lines(`roster-${exported.date}.csv`);
    expect(csv).toHaveLength(7);
    expect(csv[0]).toMatch(/^Student ID;User ID;Login;/);
    expect(await app.poll.exportRoster()).toMatchObject({ outcome: 'ok', enqueued: false, notSent: 'unchanged' });
    expect((await app.poll.status()).export.lastRunAt).toBeDefined();
  });

  it('with no connector taking the roster an export says so and notes nothing: one subscribed later the same day gets it', async () => {
    const students = { name: 'files', type: 'file', streams: ['students'], dir: path.join(dir.dir, 'out') };
    app = await createApp({ config: config({ connectors: [students] }), log, mode: 'oneshot' });
    await app.start();
    expect(await app.poll.exportRoster()).toMatchObject({ outcome: 'ok', rows: 6, enqueued: false, notSent: 'no_connector' });
    await app.stop();
    app = await createApp({ config: config(), log, mode: 'oneshot' });
    await app.start();
    const exported = await app.poll.exportRoster();
    expect(exported).toMatchObject({ outcome: 'ok', rows: 6, enqueued: true });
    await awaitDeliveries(app);
    expect(await lines(`roster-${exported.date}.csv`)).toHaveLength(7);
  });

  it('an aborted cycle makes /readyz say why until a good cycle', async () => {
    app = await createApp({ config: config(), log, mode: 'oneshot' });
    await app.start();
    await app.poll.sync();
    app.sandbox!.control.injectFault({ route: 'GET /api/v2/users', kind: 'emptyList' });
    expect((await app.poll.sync()).outcome).toBe('aborted');
    const ready = await app.http.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.poll).toMatchObject({ ok: false, reason: expect.stringContaining('empty_list') });
    expect(await app.metrics.metrics()).toContain('schoolbridge_poll_aborted_total{reason="empty_list",stream="users"} 1');
    await app.poll.sync();
    expect(app.readiness.evaluate().checks.poll).toEqual({ ok: true });
  });

  it('the daemon runs a cycle at start-up and reports its next runs', async () => {
    app = await createApp({
      config: config({ poll: { schedule: '0 0 1 1 *', timezone: 'Europe/Warsaw', onStart: true }, export: { schedule: '0 2 * * *', onStart: false } }),
      log, mode: 'daemon',
    });
    const first = new Promise<CycleResult>((resolve) => app!.poll.poller.on('cycle', resolve));
    await app.start();
    expect(await first).toMatchObject({ outcome: 'ok', trigger: 'start-up', streams: { students: { created: 6 } } });
    const next = app.poll.scheduler!.nextRuns();
    expect(next.poll).toMatch(/^\d{4}-12-31T23:00:00\.000Z$/); // 1 Jan 00:00 in Warsaw
    expect(next.export).toMatch(/T0[01]:00:00\.000Z$/);
    expect((await app.poll.status()).poll).toMatchObject({ lastOutcome: 'ok', nextRunAt: next.poll });
  });

  it('runs a failed scheduled export again within the hour, not the next night', async () => {
    const lines: string[] = [];
    const captured = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    app = await createApp({ config: config({ poll: { schedule: '0 0 1 1 *', onStart: false }, export: { schedule: '0 2 * * *', onStart: true } }), log: captured, mode: 'daemon' });
    // Its fresh poll is refused the students list: failed, and the export with it.
    app.sandbox!.control.injectFault({ route: 'GET /api/v2/students', kind: 'status', status: 400, times: 'always' });
    await app.start();
    await app.poll.scheduler!.whenIdle();
    const retry = lines.map((line) => JSON.parse(line) as { msg: string; job?: string; retryInMs?: number }).find((line) => line.job === 'export' && line.retryInMs !== undefined);
    expect(retry).toMatchObject({ msg: 'export failed; it runs again in 60 s', retryInMs: 60_000 });
    // Every replica's status says the last export of any of them, failed ones too.
    const failed = (await app.poll.status()).export;
    expect(failed).toMatchObject({ lastOutcome: 'failed', lastRunAt: expect.any(String) });
    expect(await app.store.state.get('roster.lastRun')).toEqual({ startedAt: failed.lastRunAt, outcome: 'failed', replica: expect.any(String) });
    const later = new Date(Date.parse(failed.lastRunAt!) + 60_000).toISOString();
    await app.store.state.put({ 'roster.lastRun': { startedAt: later, outcome: 'ok', replica: 'another' } });
    expect((await app.poll.status()).export).toMatchObject({ lastOutcome: 'ok', lastRunAt: later });
  });
});
