import { describe, expect, it } from 'vitest';
import { createIntakeLoad, SATURATED } from './intake-load.js';

describe('createIntakeLoad', () => {
  it('counts the webhooks in flight and stamps when SATURATED or more were at once', () => {
    let now = 1000;
    const load = createIntakeLoad(() => now);
    for (let i = 1; i < SATURATED; i++) load.enter();
    expect(load.inFlight()).toBe(SATURATED - 1);
    expect(load.saturatedAt()).toBe(-Infinity);
    now = 2000;
    load.enter();
    expect(load.saturatedAt()).toBe(2000);
    load.leave();
    now = 3000;
    // At the mark again: stamped again.
    load.enter();
    expect(load.saturatedAt()).toBe(3000);
    for (let i = 0; i < SATURATED + 3; i++) load.leave();
    expect(load.inFlight()).toBe(0);
    now = 4000;
    // Under the mark: the stamp stays where it was, and the outbox's hold runs out from it.
    load.enter();
    expect(load.saturatedAt()).toBe(3000);
    expect(load.now()).toBe(4000);
  });
});
