import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { testClock } from '../../test/support/clock.js';
import { createHealth } from './health.js';
import { startHeartbeat } from './heartbeat.js';

const log = pino({ level: 'silent' });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('startHeartbeat', () => {
  it('makes the store unhealthy when a beat goes unanswered for stallMs, not before', async () => {
    const clock = testClock(0, { sleep: 'timers' });
    const health = createHealth();
    let answer: () => void = () => {};
    let beats = 0;
    const beat = () => new Promise<void>((resolve) => {
      beats += 1;
      // A write that succeeds makes the store healthy again (the store's own calls do so).
      answer = () => (health.succeeded(), resolve());
    });
    const heartbeat = startHeartbeat({ beat, health, clock, log, intervalMs: 5000, stallMs: 10_000 });
    await turn();
    clock.advance(5000);
    await turn();
    expect(beats).toBe(1);
    clock.advance(9999);
    await turn();
    expect(health.current()).toEqual({ ok: true });
    clock.advance(1);
    await turn();
    expect(health.current()).toEqual({ ok: false, reason: 'the store has not answered for 10 s', since: 15_000 });
    answer();
    await turn();
    expect(health.current()).toEqual({ ok: true });
    // Answered in time: nothing said.
    clock.advance(5000);
    await turn();
    expect(beats).toBe(2);
    answer();
    await turn();
    clock.advance(10_000);
    await turn();
    expect(health.current()).toEqual({ ok: true });
    // A stop does not wait for a beat that is not answered (the third, begun meanwhile).
    expect(beats).toBe(3);
    await heartbeat.stop();
  });
});
