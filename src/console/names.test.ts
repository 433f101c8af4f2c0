import { describe, expect, it } from 'vitest';
import { namesOf, personRefOf, recordLabel } from './names.js';

describe('names next to ids', () => {
  it.each([
    ['students:123:9f2c41d07a1e', 'student 123'],
    ['users:7:aaaaaaaaaaaa', 'user 7'],
    ['invoices:invoice.created:501:bd771749e2b0', 'invoice 501 (invoice.created)'],
    ['events:invoice.updated:501:bd771749e2b0:r1', 'invoice 501 (invoice.updated)'],
    ['events:course.created:9:bd771749e2b0', 'course.created 9'],
    ['roster:2026-11-22:abcdef123456', 'roster of 2026-11-22'],
    ['something-else', 'something-else'],
  ])('%s is %s', (id, label) => {
    expect(recordLabel(id)).toBe(label);
  });

  it('finds the person of a polled record only', () => {
    expect(personRefOf('students:12:abc')).toEqual({ stream: 'students', key: 12 });
    expect(personRefOf('invoices:invoice.created:12:abc')).toBeUndefined();
  });

  it('puts the snapshot\'s name before the label, and the label alone when the person is not known', async () => {
    const people = { get: async () => [{ stream: 'students' as const, key: 1, chain: 'c', name: 'Anna Nowak' }] };
    const names = await namesOf(people, ['students:1:c', 'students:2:d', 'roster:2026-11-22:x']);
    expect([...names.values()]).toEqual(['Anna Nowak (student 1)', 'student 2', 'roster of 2026-11-22']);
  });
});
