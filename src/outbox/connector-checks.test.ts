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
});
