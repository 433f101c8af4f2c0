import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createActivity, keptInvoices, performAction, pickAction, schoolCap, type ActivityAction } from './activity.js';
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
    const activity = createActivity({ control: sandbox.control, random: createRandom(5), clock, log: pino({ level: 'silent' }), intervalMs: 1000, size: 5 });
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

  it('keeps the school about its seeded size and a bounded number of invoices, however long it runs', () => {
    sandbox = createSandbox({ students: 20 });
    const { control } = sandbox;
    // Users of no student (the school's staff) stay as they are.
    const staff = control.users().length - 2 * control.students().length;
    const random = createRandom(7);
    const changes: string[] = [];
    for (let i = 0; i < 5000; i++) changes.push(performAction(pickAction(random.next()), control, random, 20));
    expect(control.students().length).toBeLessThanOrEqual(schoolCap(20));
    // Each student has its own user and a parent user; a student that left took both along.
    expect(control.users().length).toBeLessThanOrEqual(2 * schoolCap(20) + staff);
    expect(control.invoices()).toHaveLength(keptInvoices(20));
    expect(changes.filter((change) => / left$/.test(change)).length).toBeGreaterThan(100);
    expect(changes.filter((change) => / forgotten$/.test(change)).length).toBeGreaterThan(100);
  });
});
