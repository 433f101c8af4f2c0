import { describe, expect, it } from 'vitest';
import { generateSchool } from './seed-data.js';

describe('generateSchool', () => {
  it('is deterministic by seed', () => {
    expect(generateSchool(3, 30)).toEqual(generateSchool(3, 30));
    expect(generateSchool(3, 30)).not.toEqual(generateSchool(4, 30));
  });

  it.each([0, 1, 5, 200])('makes %i students with a student and a parent user each, ids ascending', (count) => {
    const school = generateSchool(1, count);
    expect(school.students).toHaveLength(count);
    expect(school.users.filter((user) => user.systemRole === 'student')).toHaveLength(count);
    expect(school.users.filter((user) => user.systemRole === 'parent')).toHaveLength(count);
    for (const list of [school.students, school.users]) {
      list.forEach((row, index) => index > 0 && expect(row.id).toBeGreaterThan(list[index - 1]!.id));
    }
    const usersById = new Map(school.users.map((user) => [user.id, user]));
    for (const student of school.students) {
      const user = usersById.get(student.userId)!;
      expect(user.systemRole).toBe('student');
      expect(usersById.get(user.parentUserId!)?.systemRole).toBe('parent');
    }
    expect(school.nextStudentId).toBeGreaterThan(school.students.at(-1)?.id ?? 0);
    expect(school.nextUserId).toBeGreaterThan(school.users.at(-1)!.id);
  });

  it('gives unique logins and keeps the only-null fields null', () => {
    const school = generateSchool(9, 500);
    expect(new Set(school.users.map((user) => user.login)).size).toBe(school.users.length);
    for (const user of school.users) {
      expect(user.additionalData.pesel).toBeNull();
      expect(user.additionalData.billingEmail).toBeNull();
    }
  });

  it('writes Polish with its diacritics', () => {
    const text = JSON.stringify(generateSchool(1, 100));
    expect(text).toMatch(/[ąćęłńóśźż]/);
    expect(text).toMatch(/[ŁŚŻ]/);
  });
});
