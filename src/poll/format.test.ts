import { describe, expect, it } from 'vitest';
import type { ChangeRecord } from '../records.js';
import type { CycleResult } from './cycle.js';
import { cycleJson, cycleLine, formatCycle } from './format.js';

const change = (key: number, extra: Partial<ChangeRecord> = {}): ChangeRecord => ({
  id: `students:${key}:000000000000`, stream: 'students', op: 'updated', key, detectedAt: '2026-11-22T10:00:00.000Z',
  changes: [{ path: 'user.lastName', from: 'A', to: 'B "quoted"\nline' }], record: { id: key, user: { lastName: 'B', tags: [] } }, previous: { id: key, user: { lastName: 'A', tags: [1, [2]] } },
  ...extra,
});

describe('cycleJson', () => {
  it('writes what JSON.stringify(result, null, 2) writes (changes last), a change at a time', () => {
    const summary = { outcome: 'ok', dryRun: true, streams: { students: { created: 1 } }, durationMs: 12 };
    for (const changes of [[change(1)], [change(1), change(2, { op: 'created', previous: null, changes: [] }), change(3, { record: null })], []]) {
      const pieces = [...cycleJson({ ...summary, changes })];
      expect(pieces.join('')).toBe(`${JSON.stringify({ ...summary, changes }, null, 2)}\n`);
      expect(pieces.length).toBe(changes.length === 0 ? 1 : changes.length + 2);
    }
    expect([...cycleJson(summary)].join('')).toBe(`${JSON.stringify(summary, null, 2)}\n`);
  });
});

describe('cycleLine', () => {
  const stream = (fetched: number, created = 0, updated = 0, deleted = 0, baselined = 0) => ({ fetched, created, updated, deleted, baselined });
  const result = (fields: Partial<CycleResult>): CycleResult => ({
    outcome: 'ok', dryRun: false, trigger: 'schedule', startedAt: '', durationMs: 812, phases: {},
    streams: { students: stream(40, 2, 1), users: stream(83) }, ...fields,
  });

  it('says the outcome, the time and the counts per stream on one line', () => {
    expect(cycleLine(result({}))).toBe('poll cycle done in 0.8 s: students 40 (2 created, 1 updated), users 83 (no change)');
    expect(cycleLine(result({ streams: { students: stream(5, 0, 0, 0, 5), users: stream(9, 0, 0, 2) } }))).toBe('poll cycle done in 0.8 s: students 5 (5 recorded silently), users 9 (2 deleted)');
    expect(cycleLine(result({ outcome: 'aborted', reason: 'mass_delete', message: 'users would lose 90%' }))).toMatch(/^poll cycle aborted after 0\.8 s: users would lose 90%; students 40 /);
    expect(cycleLine(result({ dryRun: true }))).toMatch(/^poll dry run in 0\.8 s: /);
    const none = { fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 };
    expect(cycleLine(result({ outcome: 'failed', reason: 'store.unavailable', message: 'the store cannot write: SQLITE_FULL', streams: { students: none, users: none } })))
      .toBe('poll cycle failed after 0.8 s: the store cannot write: SQLITE_FULL');
  });
});

describe('formatCycle', () => {
  const base: CycleResult = {
    outcome: 'ok', dryRun: true, trigger: 'cli', startedAt: '', durationMs: 40, phases: {},
    streams: { students: { fetched: 15, created: 0, updated: 0, deleted: 0, baselined: 0 } },
  };

  it('says a dry run stopped, and that its counts go only as far as it got', () => {
    expect(formatCycle(base)).toBe('dry run (nothing written or delivered) in 40 ms\nstudents: 15 fetched, 0 created, 0 updated, 0 deleted');
    expect(formatCycle({ ...base, outcome: 'aborted', reason: 'mass_delete', message: '5 of 20 students (25.0%) would be deleted, more than poll.maxDeleteRatio 0.2' })).toBe([
      'dry run aborted (nothing written or delivered) after 40 ms: 5 of 20 students (25.0%) would be deleted, more than poll.maxDeleteRatio 0.2',
      'students: 15 fetched, 0 created, 0 updated, 0 deleted',
      '(counts up to where it stopped)',
    ].join('\n'));
    expect(formatCycle({ ...base, dryRun: false, outcome: 'failed', reason: 'upstream.timeout' }).split('\n')[0]).toBe('poll cycle failed after 40 ms: upstream.timeout');
  });

  it('shows no counts for a cycle refused before it read anything', () => {
    const refused: CycleResult = {
      ...base, dryRun: false, outcome: 'failed', reason: 'poll.busy', message: 'another process is running a poll cycle on this database (stream students); try again when it is done',
      streams: { students: { fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 }, users: { fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 } },
    };
    // Not a failure of this cycle, nor a time to wait: another one runs.
    expect(formatCycle(refused)).toBe('poll cycle not run: another process is running a poll cycle on this database (stream students); try again when it is done');
    expect(cycleLine({ ...refused, durationMs: 217 })).toBe('poll cycle not run: another process is running a poll cycle on this database (stream students); try again when it is done');
  });
});
