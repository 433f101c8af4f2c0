import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeCronFactory, type CronTimer } from './cron.js';

const log = pino({ level: 'silent' });
const timers: CronTimer[] = [];
const timer = (expression: string, timezone = 'Europe/Warsaw') => {
  const made = nodeCronFactory({ name: 'test', expression, timezone }, () => {}, log);
  timers.push(made);
  return made;
};

afterEach(() => {
  for (const made of timers.splice(0)) made.stop();
  vi.useRealTimers();
});

describe('node-cron timer (no waiting: the library matches given instants)', () => {
  it.each([
    ['0 2 * * *', '2026-01-15T01:00:00Z', true], // 02:00 CET
    ['0 2 * * *', '2026-01-15T02:00:00Z', false],
    ['0 2 * * *', '2026-07-15T00:00:00Z', true], // 02:00 CEST
    ['*/5 * * * *', '2026-07-15T00:10:00Z', true],
    ['*/5 * * * *', '2026-07-15T00:11:00Z', false],
    ['*/10 * * * * *', '2026-07-15T00:11:20Z', true], // 6 fields: seconds first
    ['*/10 * * * * *', '2026-07-15T00:11:21Z', false],
  ])('%s fires at %s: %s', (expression, iso, expected) => {
    expect(timer(expression).matches(new Date(iso))).toBe(expected);
  });

  it('reports the next run in the schedule timezone once started', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T10:00:00Z'));
    const nightly = timer('0 2 * * *');
    nightly.start();
    expect(nightly.nextRun()?.toISOString()).toBe('2026-11-23T01:00:00.000Z');
    nightly.stop();
    expect(nightly.nextRun()).toBeNull();
    nightly.stop();
  });
});
