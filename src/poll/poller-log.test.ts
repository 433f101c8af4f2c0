import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CycleResult } from './cycle.js';
import { logResult } from './poller.js';

const base: CycleResult = { outcome: 'ok', dryRun: false, trigger: 'schedule', startedAt: '2026-11-30T10:00:00.000Z', durationMs: 10, phases: {}, streams: {} };

function levelOf(result: CycleResult): number {
  const lines: { level: number }[] = [];
  logResult(pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number }) }), result);
  return lines[0]!.level;
}

describe('a cycle\'s log line', () => {
  it('is an error only for a failure: info when done or stopped on purpose, a warning when a guard aborted it', () => {
    expect(levelOf(base)).toBe(30);
    expect(levelOf({ ...base, outcome: 'aborted', reason: 'mass_delete', stream: 'users' })).toBe(40);
    expect(levelOf({ ...base, outcome: 'failed', reason: 'upstream.timeout', message: 'upstream did not answer' })).toBe(50);
    expect(levelOf({ ...base, outcome: 'failed', reason: 'poll.stopped', message: 'stopped during the cycle' })).toBe(30);
  });
});
