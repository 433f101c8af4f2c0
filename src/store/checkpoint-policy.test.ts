import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkpointDue } from './checkpoint-policy.js';

const MB = 1024 * 1024;

describe('checkpointDue', () => {
  it.each([
    ['write', 10 * MB, 0, false, 'a small WAL and no documents yet'],
    ['write', 65 * MB, 0, true, 'past the minimum'],
    ['write', 500 * MB, 400 * MB, false, 'below twice a big snapshot'],
    ['write', 801 * MB, 400 * MB, true, 'past twice a big snapshot'],
    ['timer', 6 * MB, 400 * MB, false, 'a poll changed a few records of a 400 MB snapshot'],
    ['timer', 40 * MB, 400 * MB, true, 'a tenth of the documents'],
    ['timer', 1, 0, true, 'anything at all in a store with no documents yet'],
    ['timer', 0, 0, false, 'nothing written since the last one'],
  ] as const)('%s, WAL %i B, documents %i B → %s (%s)', (trigger, wal, docs, due, _why) => {
    expect(checkpointDue(trigger, wal, docs, 64 * MB)).toBe(due);
  });

  it('the timer never waits longer than a write would, and neither fires on an empty WAL', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat(), (wal, docs, min) => {
        if (checkpointDue('write', wal, docs, min)) expect(checkpointDue('timer', wal, docs, min)).toBe(true);
        expect(checkpointDue('write', 0, docs, min) || checkpointDue('timer', 0, docs, min)).toBe(false);
      }),
    );
  });
});
