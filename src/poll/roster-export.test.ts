import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { OutboxPort } from './ports.js';
import type { Poller } from './poller.js';
import { createRosterExporter } from './roster-export.js';

describe('roster export', () => {
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
