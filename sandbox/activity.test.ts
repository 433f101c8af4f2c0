import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createActivity, pickAction, type ActivityAction } from './activity.js';
import { createSandbox } from './sandbox.js';
import { createRandom } from './prng.js';
import { testClock } from '../test/support/clock.js';
import type { Sandbox } from './types.js';

describe('pickAction', () => {
  it.each<[number, ActivityAction]>([
    [0, 'newStudent'], [0.24, 'newStudent'], [0.25, 'rename'], [0.4, 'move'], [0.55, 'archive'],
    [0.65, 'newInvoice'], [0.9, 'updateInvoice'], [0.9999, 'updateInvoice'],
  ])('%f → %s', (roll, action) => {
    expect(pickAction(roll)).toBe(action);
  });
});

describe('activity', () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.stop();
  });

  it('changes the school on each tick of the clock, and stops', async () => {
    // An instant clock: every sleep returns at once, so ticks are counted, not timed.
    const clock = testClock(Date.UTC(2026, 10, 22), { sleep: 'instant' });
    sandbox = createSandbox({ students: 5, clock });
    const before = JSON.stringify([sandbox.control.students(), sandbox.control.invoices()]);
    const activity = createActivity({ control: sandbox.control, random: createRandom(5), clock, log: pino({ level: 'silent' }), intervalMs: 1000 });
    activity.start();
    const ticks = new Promise<void>((resolve) => {
      const check = () => (clock.slept.length >= 30 ? resolve() : setImmediate(check));
      check();
    });
    await ticks;
    await activity.stop();
    await activity.stop();
    expect(JSON.stringify([sandbox.control.students(), sandbox.control.invoices()])).not.toBe(before);
    expect(sandbox.control.invoices().length + sandbox.control.students().length).toBeGreaterThan(5);
  });
});
