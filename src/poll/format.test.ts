import { describe, expect, it } from 'vitest';
import type { ChangeRecord } from '../records.js';
import { cycleJson } from './format.js';

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
