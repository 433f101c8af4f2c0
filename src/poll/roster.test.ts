import { describe, expect, it } from 'vitest';
import { ROSTER_COLUMNS } from '../records.js';
import { localDate, rosterRecord, rosterRow, rosterRows } from './roster.js';

const student = {
  id: 12, isAdult: 0, isActive: 1,
  user: {
    id: 30, login: 'anna.kowalska', firstName: 'Anna', lastName: 'Kowalska', fullname: 'Anna Kowalska', isArchived: 0, language: 'pl_PL',
    additionalData: { email: 'anna@example.pl', phone: 'ffdfff', mobile: null, street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Łódź' },
    parentUser: { id: 31, firstName: null, lastName: null, additionalData: { email: null, phone: null, mobile: '600100200' } },
  },
};

describe('roster', () => {
  it('flattens a student with its user and parent, values unchanged', () => {
    expect(rosterRow(student)).toEqual({
      studentId: 12, userId: 30, login: 'anna.kowalska', firstName: 'Anna', lastName: 'Kowalska', fullname: 'Anna Kowalska',
      email: 'anna@example.pl', phone: 'ffdfff', mobile: null, street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Łódź',
      language: 'pl_PL', isActive: 1, isAdult: 0, isArchived: 0,
      parentUserId: 31, parentFirstName: null, parentLastName: null, parentEmail: null, parentPhone: null, parentMobile: '600100200',
    });
    expect(Object.keys(rosterRow(student)).sort()).toEqual([...ROSTER_COLUMNS].sort());
  });

  it('tolerates missing parts', () => {
    const row = rosterRow({ id: 1, user: { id: 2, parentUser: null, additionalData: null } });
    expect(row).toMatchObject({ studentId: 1, userId: 2, email: null, parentUserId: null, parentEmail: null, isActive: null });
  });

  it('orders rows by student id', () => {
    expect(rosterRows([{ ...student, id: 5 }, { ...student, id: 2 }]).map((r) => r.studentId)).toEqual([2, 5]);
  });

  it.each([
    ['2026-11-22T22:59:59Z', 'Europe/Warsaw', '2026-11-22'],
    ['2026-11-22T23:00:00Z', 'Europe/Warsaw', '2026-11-23'],
    ['2026-07-01T21:59:59Z', 'Europe/Warsaw', '2026-07-01'],
    ['2026-07-01T22:00:00Z', 'Europe/Warsaw', '2026-07-02'],
    ['2026-07-01T22:00:00Z', 'UTC', '2026-07-01'],
  ])('local date of %s in %s is %s', (iso, zone, date) => {
    expect(localDate(Date.parse(iso), zone)).toBe(date);
  });

  it('record id depends on the date and the rows only', () => {
    const rows = rosterRows([student]);
    const at = Date.parse('2026-11-22T01:00:00Z');
    const a = rosterRecord(rows, at, 'Europe/Warsaw');
    expect(a).toMatchObject({ stream: 'roster', key: '2026-11-22', date: '2026-11-22', generatedAt: '2026-11-22T01:00:00.000Z' });
    expect(a.id).toMatch(/^roster:2026-11-22:[0-9a-f]{12}$/);
    expect(rosterRecord(rows, at + 60_000, 'Europe/Warsaw').id).toBe(a.id);
    expect(rosterRecord(rosterRows([{ ...student, isActive: 0 }]), at, 'Europe/Warsaw').id).not.toBe(a.id);
    expect(rosterRecord(rows, at + 86_400_000, 'Europe/Warsaw').id).not.toBe(a.id);
  });
});
