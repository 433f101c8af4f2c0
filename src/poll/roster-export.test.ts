import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { OutboxPort } from './ports.js';
import type { Poller } from './poller.js';
import { TEST_NOW_MS, testClock } from '../../test/support/clock.js';
import { createRosterExporter, EXPORT_BUSY_LOOK_MS, EXPORT_BUSY_WAIT_MS } from './roster-export.js';

describe('roster export', () => {
  it('waits for a poll cycle another process runs, then exports; gives up after EXPORT_BUSY_WAIT_MS', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const clock = testClock(TEST_NOW_MS, { sleep: 'instant' });
    const busy = { outcome: 'failed', reason: 'poll.busy', message: 'another process is running a poll cycle on this database (stream students); try again when it is done' };
    let refusals = 3;
    const cycles: string[] = [];
    const exporter = createRosterExporter({
      poller: { runCycle: async ({ trigger }: { trigger: string }) => (cycles.push(trigger), refusals-- > 0 ? busy : { outcome: 'ok' }) } as unknown as Poller,
      snapshot: { scan: async () => [] },
      state: { get: async () => undefined, put: async () => {} },
      outbox: { subscribers: () => [] } as unknown as OutboxPort,
      timezone: 'UTC', log, metrics: new Registry(), clock,
    });
    expect(await exporter.exportRoster({ trigger: 'schedule' })).toMatchObject({ outcome: 'ok', notSent: 'no_connector' });
    expect(cycles).toEqual(Array.from({ length: 4 }, () => 'export:schedule'));
    expect(clock.now() - TEST_NOW_MS).toBe(3 * EXPORT_BUSY_LOOK_MS);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(lines.filter((l) => l.msg.startsWith('roster export waits'))).toHaveLength(1);
    // Still refused after the wait: failed, saying why.
    refusals = Infinity;
    expect(await exporter.exportRoster({ trigger: 'manual' })).toMatchObject({ outcome: 'failed', reason: 'poll.busy' });
    expect(cycles.length - 4).toBe(EXPORT_BUSY_WAIT_MS / EXPORT_BUSY_LOOK_MS + 1);
    // Stopped while it waits: interrupted, not failed.
    const stopping = new AbortController();
    stopping.abort(new Error('the scheduler is stopping'));
    expect(await exporter.exportRoster({ trigger: 'schedule', signal: stopping.signal })).toMatchObject({ outcome: 'failed', reason: 'export.stopped' });
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'roster export interrupted: stopped while it waited for the poll cycle another process is running' });
  });

  it('stopped with the daemon while it reads the snapshot, it says "interrupted" at info, not an error', async () => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const stopping = new AbortController();
    const exporter = createRosterExporter({
      poller: { runCycle: async () => ({ outcome: 'ok' }) } as unknown as Poller,
      // The scheduler stops while the rows are read: the read ends with the stop's reason.
      snapshot: {
        scan: () => {
          stopping.abort(new Error('the scheduler is stopping'));
          return Promise.reject(stopping.signal.reason as Error);
        },
      },
      state: { get: async () => undefined, put: async () => {} },
      outbox: { subscribers: () => ['files'] } as unknown as OutboxPort,
      timezone: 'UTC',
      log,
      metrics: new Registry(),
    });
    const result = await exporter.exportRoster({ trigger: 'schedule', signal: stopping.signal });
    expect(result).toMatchObject({ outcome: 'failed', reason: 'export.stopped' });
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'roster export interrupted: the scheduler is stopping' })]);
  });
});
