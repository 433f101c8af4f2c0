import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import type { CycleResult } from '../src/poll/index.js';
import { tempDir } from './support/temp.js';

/**
 * The embedded default started twice on one store directory: the second run continues the simulated
 * school the first left (kept in store.dir/sandbox.json), so it reports no change that did not
 * happen — no student "deleted", no invoice delivered again under a new id.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const lines = async (file: string) =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: string; op?: string; event?: string; key: unknown });

function nextCycle(app: App): Promise<CycleResult> {
  return new Promise((resolve) => {
    const off = app.poll.poller.on('cycle', (result) => {
      off();
      resolve(result);
    });
  });
}

describe('npm start, twice', () => {
  it('continues where it stopped', async () => {
    const { dir, cleanup } = await tempDir('sb-restart-');
    cleanups.push(cleanup);
    const out = path.join(dir, 'data', 'out');
    const config = configSchema.parse({
      sandbox: { students: 8, activity: true, activityIntervalMs: 60_000, retryTimeScale: 0.001 },
      server: { host: '127.0.0.1', port: 0 },
      poll: { schedule: '0 0 1 1 *', onStart: true },
      export: { onStart: false },
      store: { dir: path.join(dir, 'data') },
      connectors: [{ name: 'files', type: 'file', streams: ['students', 'users', 'invoices', 'events'], dir: out }],
    });
    const run = async (work: (app: App) => Promise<void>) => {
      const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'daemon' });
      const firstCycle = nextCycle(app);
      await app.start();
      await app.webhooks.reconciler.converged();
      expect((await firstCycle).outcome).toBe('ok');
      await work(app);
      await app.outbox.whenIdle();
      await app.stop();
    };

    // A first run: the school changes (students and invoices come and go), and it is all delivered.
    await run(async (app) => {
      const control = app.sandbox!.control;
      for (let i = 0; i < 4; i++) {
        const invoice = control.createInvoice();
        await control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered' && attempt.body.includes(`"id":${invoice.id},`));
      }
      control.createStudent();
      control.updateStudent(control.students()[0]!.id, { city: 'Sopot' });
      control.deleteStudent(control.students()[1]!.id);
      expect((await app.poll.sync()).outcome).toBe('ok');
      const last = control.createInvoice();
      await control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered' && attempt.body.includes(`"id":${last.id},`));
    });
    const students = await lines(path.join(out, 'students.jsonl'));
    const invoices = await lines(path.join(out, 'invoices.jsonl'));
    expect(students.filter((r) => r.op === 'deleted')).toHaveLength(1);
    expect(invoices).toHaveLength(5);

    // The second run's start-up cycle finds nothing new; the next invoice is a new one.
    await run(async (app) => {
      const invoice = app.sandbox!.control.createInvoice();
      expect(invoice.id).toBe(1006);
      await app.sandbox!.control.waitFor('delivery', (attempt) => attempt.outcome === 'delivered' && attempt.body.includes(`"id":${invoice.id},`));
    });
    expect(await lines(path.join(out, 'students.jsonl'))).toEqual(students);
    const after = await lines(path.join(out, 'invoices.jsonl'));
    expect(after.slice(0, invoices.length)).toEqual(invoices);
    expect(after.slice(invoices.length).map((r) => r.key)).toEqual([1006]);
  });
});
