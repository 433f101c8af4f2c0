import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { testClock } from '../../test/support/clock.js';
import type { ConnectorContext } from '../connectors/types.js';
import type { ConnectorInstance } from './connector-instance.js';
import { createConnectorChecks, FAILING_MS } from './connector-checks.js';

describe('connector checks', () => {
  it('run every interval, and sooner while one fails, until it passes again', async () => {
    const clock = testClock(undefined, { sleep: 'timers' });
    const answers = [false, false, true];
    let calls = 0;
    const instance = { name: 'hook', connector: { check: async () => (answers[calls++] ?? true ? { ok: true } : { ok: false, reason: 'answers 500' }) } } as unknown as ConnectorInstance;
    const abort = new AbortController();
    const checks = createConnectorChecks({ targets: [{ instance, ctx: {} as ConnectorContext }], clock, log: pino({ level: 'silent' }), intervalMs: 60_000, signal: abort.signal });
    /** Until the loop has asked for its `n`th sleep. */
    const sleeps = async (n: number) => {
      while (clock.slept.length < n) await new Promise((resolve) => setImmediate(resolve));
    };
    checks.start();
    // Failing: again after FAILING_MS, not the interval.
    await sleeps(1);
    expect([calls, checks.state('hook'), clock.slept]).toEqual([1, { ok: false, reason: 'answers 500' }, [FAILING_MS]]);
    clock.advance(FAILING_MS);
    await sleeps(2);
    expect([calls, clock.slept]).toEqual([2, [FAILING_MS, FAILING_MS]]);
    // Passing again: back to the interval.
    clock.advance(FAILING_MS);
    await sleeps(3);
    expect([calls, checks.state('hook'), clock.slept]).toEqual([3, { ok: true }, [FAILING_MS, FAILING_MS, 60_000]]);
    abort.abort();
    clock.advance(60_000);
    await checks.stop();
  });

  it('check a connector again at once when its deliveries start failing or go through again, at most once per FAILING_MS', async () => {
    const clock = testClock(undefined, { sleep: 'timers' });
    let disk: 'free' | 'full' = 'free';
    let calls = 0;
    const check = async () => {
      calls += 1;
      return disk === 'free' ? { ok: true } : { ok: false, reason: 'cannot write out/events.jsonl: ENOSPC' };
    };
    const instance = { name: 'files', connector: { check } } as unknown as ConnectorInstance;
    const abort = new AbortController();
    const checks = createConnectorChecks({ targets: [{ instance, ctx: {} as ConnectorContext }], clock, log: pino({ level: 'silent' }), intervalMs: 60_000, signal: abort.signal });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await checks.runAll();
    expect([calls, checks.state('files')]).toEqual([1, { ok: true }]);
    // Deliveries that go through say nothing new; a failure within FAILING_MS of the last check waits.
    checks.delivered('files', true);
    disk = 'full';
    checks.delivered('files', false);
    await turn();
    expect(calls).toBe(1);
    clock.advance(FAILING_MS);
    checks.delivered('files', false);
    await turn();
    expect([calls, checks.state('files')]).toEqual([2, { ok: false, reason: 'cannot write out/events.jsonl: ENOSPC' }]);
    // Failing, more failures say nothing new; one that goes through is checked again.
    checks.delivered('files', false);
    disk = 'free';
    clock.advance(FAILING_MS);
    checks.delivered('files', true);
    await turn();
    expect([calls, checks.state('files')]).toEqual([3, { ok: true }]);
    abort.abort();
    await checks.stop();
  });
});
