import { describe, expect, it } from 'vitest';
import type { ListedDelivery } from '../store/index.js';
import type { CreatedRange } from '../store/index.js';
import { formatDeliveries, printable } from './format.js';
import { owedOfRanges } from './owed-ranges.js';

const base = { connector: 'hook', stream: 'students' as const, enqueuedAt: 0, attempts: 1, fence: 1 };

describe('deliveries list', () => {
  it('shows state, attempts, what each waits for and the last error', () => {
    const entries: ListedDelivery[] = [
      { ...base, id: 'hook:s:1:a', recordId: 's:1:a', orderKey: 'students:1', seq: 1, status: 'dead', runAt: 0, lastError: 'webhook.rejected: the receiver\nanswered 400' },
      { ...base, id: 'hook:s:1:b', recordId: 's:1:b', orderKey: 'students:1', seq: 2, status: 'pending', runAt: 0, waitingFor: 'hook:s:1:a' },
      { ...base, id: 'hook:s:2:a', recordId: 's:2:a', orderKey: 'students:2', seq: 3, status: 'pending', runAt: 5000 },
      { ...base, id: 'hook:s:3:a', recordId: 's:3:a', orderKey: 'students:3', seq: 4, status: 'pending', runAt: 0, leaseUntil: 600_000, leaseOwner: 'r1' },
    ];
    expect(formatDeliveries(entries, 1000)).toBe(
      [
        'ID          STATE      ATTEMPTS  NEXT                      LAST ERROR',
        'hook:s:1:a  dead       1         -                         webhook.rejected: the receiver answered 400',
        'hook:s:1:b  pending    1         after hook:s:1:a',
        'hook:s:2:a  pending    1         1970-01-01T00:00:05.000Z',
        'hook:s:3:a  in-flight  1         -',
        '4 deliveries (1 dead; retry with: schoolbridge deliveries retry <id> | --all-dead)',
        '',
      ].join('\n'),
    );
    expect(formatDeliveries([], 0)).toBe('no deliveries\n');
  });

  it('shows a control character a receiver answered as an escape, never as itself', () => {
    const entry: ListedDelivery = { ...base, id: 'hook:s:1:a', recordId: 's:1:a', orderKey: 'students:1', seq: 1, status: 'dead', runAt: 0, lastError: 'accounting.rejected: \u001b[31mred\u0000 \u009b2J' };
    const text = formatDeliveries([entry], 0);
    expect(text).toContain('accounting.rejected: \\u001b[31mred\\u0000 \\u009b2J');
    // eslint-disable-next-line no-control-regex
    expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(printable('Łódź\ttab')).toBe('Łódź\\u0009tab');
  });

  it('counts what a first cycle\'s ranges owe, a line per connector and stream, where it listed nothing', () => {
    const range = (connector: string, stream: 'students' | 'users', part: number, remaining: number, more: Partial<CreatedRange> = {}): CreatedRange =>
      ({ connector, stream, part, detectedAt: 'T0', remaining, upto: 100, runAt: 0, attempts: 0, ...more });
    const ranges = [
      range('hook', 'students', 0, 10),
      range('hook', 'students', 1, 9, { runAt: 4000, attempts: 2, lastError: 'webhook.unavailable: the receiver\nanswered 503' }),
      range('files', 'users', 0, 1),
    ];
    const owed = owedOfRanges(ranges);
    expect(owed).toEqual([
      { connector: 'hook', stream: 'students', remaining: 19, runAt: 0, attempts: 2, lastError: 'webhook.unavailable: the receiver\nanswered 503' },
      { connector: 'files', stream: 'users', remaining: 1, runAt: 0, attempts: 0 },
    ]);
    expect(owedOfRanges(ranges, { connector: 'files' })).toEqual([owed[1]]);
    expect(owedOfRanges(ranges, { state: 'dead' })).toEqual([]);
    expect(formatDeliveries([], 1000, owed)).toBe([
      'owed       19 created changes of students to hook from a first cycle, in key order (not listed one by one); its next batch now after 2 attempts: webhook.unavailable: the receiver answered 503',
      'owed       1 created change of users to files from a first cycle, in key order (not listed one by one)',
      '',
    ].join('\n'));
  });
});
