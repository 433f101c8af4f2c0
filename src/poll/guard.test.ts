import { describe, expect, it } from 'vitest';
import { checkDeleteGuard, type GuardInput } from './guard.js';

const input = (patch: Partial<GuardInput>): GuardInput => ({
  stream: 'students', snapshotSize: 100, fetched: 100, deletes: 0, maxDeleteRatio: 0.2, ...patch,
});

describe('checkDeleteGuard', () => {
  it.each([
    ['nothing deleted', {}, undefined],
    ['exactly the ratio passes', { deletes: 20, fetched: 80 }, undefined],
    ['one more aborts', { deletes: 21, fetched: 79 }, 'mass_delete'],
    ['empty list over a full snapshot', { fetched: 0, deletes: 100 }, 'empty_list'],
    ['empty list over an empty snapshot is fine', { fetched: 0, snapshotSize: 0 }, undefined],
    ['first cycle: nothing to delete', { snapshotSize: 0, fetched: 5 }, undefined],
    ['ratio 0 forbids any delete', { deletes: 1, fetched: 99, maxDeleteRatio: 0 }, 'mass_delete'],
    ['ratio 1 allows all but the empty list', { deletes: 99, fetched: 1, maxDeleteRatio: 1 }, undefined],
  ] as const)('%s', (_name, patch, reason) => {
    expect(checkDeleteGuard(input(patch))?.reason).toBe(reason);
  });

  it('names the stream and the numbers', () => {
    expect(checkDeleteGuard(input({ stream: 'users', deletes: 50, fetched: 50 }))?.message).toBe(
      '50 of 100 users (50.0%) would be deleted, more than poll.maxDeleteRatio 0.2',
    );
  });
});
