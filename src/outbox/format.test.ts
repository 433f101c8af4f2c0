import { describe, expect, it } from 'vitest';
import type { ListedEntry } from './list.js';
import { formatDeliveries } from './format.js';
import { listEntries } from './list.js';

const base = { connector: 'hook', stream: 'students' as const, enqueuedAt: 0, attempts: 1 };

describe('deliveries list', () => {
  it('shows state, attempts, what each waits for and the last error', () => {
    const entries = listEntries([
      { ...base, id: 'hook:s:1:b', key: 's:1:b', order: 'students:1', seq: 2, status: 'pending', runAt: 0 },
      { ...base, id: 'hook:s:1:a', key: 's:1:a', order: 'students:1', seq: 1, status: 'dead', runAt: 0, lastError: 'webhook.rejected: the receiver\nanswered 400' },
      { ...base, id: 'hook:s:2:a', key: 's:2:a', order: 'students:2', seq: 3, status: 'pending', runAt: 5000 },
    ]);
    expect(entries.map((e: ListedEntry) => [e.id, e.waitingFor])).toEqual([
      ['hook:s:1:a', undefined],
      ['hook:s:1:b', 'hook:s:1:a'],
      ['hook:s:2:a', undefined],
    ]);
    expect(formatDeliveries(entries, 1000)).toBe(
      [
        'ID          STATE    ATTEMPTS  NEXT                      LAST ERROR',
        'hook:s:1:a  dead     1         -                         webhook.rejected: the receiver answered 400',
        'hook:s:1:b  pending  1         after hook:s:1:a',
        'hook:s:2:a  pending  1         1970-01-01T00:00:05.000Z',
        '3 deliveries (1 dead; retry with: schoolbridge deliveries retry <id> | --all-dead)',
        '',
      ].join('\n'),
    );
    expect(listEntries(entries, { state: 'dead' }).map((e) => e.id)).toEqual(['hook:s:1:a']);
    expect(listEntries(entries, { connector: 'other' })).toEqual([]);
    expect(formatDeliveries([], 0)).toBe('no deliveries\n');
  });
});
