import { emailFor, flag, loginFor, makeContact, makePerson, type Person } from './people.js';
import type { Random } from './prng.js';
import type { SchoolState } from './school.js';
import { makeUserRow } from './seed-data.js';
import type { PersonPatch, Student, StudentInput, StudentPatch, User, UserPatch } from './types.js';
import type { UserRow } from './views.js';

/**
 * Changes to students and users, as the service makes them: every change bumps `updatedAt` of what it
 * touched; names keep `fullname`/`name` in step; a created student gets a student user with a login
 * assigned here and a parent user whose names and additionalData are all null (docs/upstream.md).
 */
export function createStudent(state: SchoolState, input: StudentInput, now: string, random: Random): Student {
  const { counters } = state;
  const studentId = counters.nextStudentId++;
  const userId = counters.nextUserId++;
  const parentId = counters.nextUserId++;
  // Without names the sandbox invents a realistic person (activity, demos); with names only what was given.
  const invented = input.firstName === undefined && input.lastName === undefined;
  const person: Person = invented ? makePerson(random) : { firstName: input.firstName ?? '', lastName: input.lastName ?? '' };
  const times = { createdAt: now, updatedAt: now };
  const user = makeUserRow(random, { id: userId, login: loginFor(person, userId), person, role: 'student', isArchived: 0, ...times });
  Object.assign(user, { language: input.language ?? 'pl_PL', tosAccepted: null, type: 0, typeName: 'normal' });
  if (input.login) user.login = input.login;
  const email = input.email ?? (invented ? emailFor(random, person, userId) : null);
  if (invented) user.additionalData = makeContact(random, { id: counters.nextContactId++, email: email ?? '', ...times });
  user.parentUserId = parentId;
  const parent = makeUserRow(random, { id: parentId, login: `rodzic.${user.login}`, person: null, role: 'parent', isArchived: 0, ...times });
  Object.assign(parent, { language: user.language, tosAccepted: null, type: 0, typeName: 'normal' });
  state.add({ id: studentId, isAdult: input.isAdult ?? flag(false), isActive: 1, ...times, userId }, [user, parent]);
  if (!invented) applyPersonPatch(state, user, { ...input, email: email ?? undefined }, now);
  return state.student(studentId) as Student;
}

export function updateStudent(state: SchoolState, id: number, patch: StudentPatch, now: string): Student {
  const row = state.studentRow(id);
  const user = state.userRow(row.userId);
  if (patch.isActive !== undefined) row.isActive = patch.isActive;
  if (patch.isAdult !== undefined) row.isAdult = patch.isAdult;
  if (patch.isArchived !== undefined) user.isArchived = patch.isArchived;
  applyPersonPatch(state, user, patch, now);
  row.updatedAt = now;
  state.touchStudent(id);
  return state.student(id) as Student;
}

export function updateUser(state: SchoolState, id: number, patch: UserPatch, now: string): User {
  const user = state.userRow(id);
  if (patch.isArchived !== undefined) user.isArchived = patch.isArchived;
  applyPersonPatch(state, user, patch, now);
  return state.user(id) as User;
}

export function archiveStudent(state: SchoolState, id: number, now: string): Student {
  return updateStudent(state, id, { isActive: 0, isArchived: 1 }, now);
}

/** Deleting a student deletes its own user; the parent user stays (it may have other children). */
export function deleteStudent(state: SchoolState, id: number): void {
  const row = state.studentRow(id);
  state.removeStudent(id);
  state.removeUser(row.userId);
}

/** Deleting a student's user deletes the student; deleting a parent unlinks it from its child. */
export function deleteUser(state: SchoolState, id: number): void {
  const user = state.userRow(id);
  const studentId = state.studentIdOfUser(id);
  const student = studentId === undefined ? undefined : state.studentRow(studentId);
  if (student && student.userId === id) state.removeStudent(student.id);
  if (student && user.systemRole === 'parent') {
    state.userRow(student.userId).parentUserId = null;
    state.touchUser(student.userId);
  }
  state.removeUser(id);
}

const CONTACT_FIELDS = ['email', 'phone', 'mobile', 'street', 'zipCode', 'city'] as const;

function applyPersonPatch(state: SchoolState, user: UserRow, patch: PersonPatch, now: string): void {
  if (patch.firstName !== undefined) user.firstName = patch.firstName;
  if (patch.lastName !== undefined) user.lastName = patch.lastName;
  if (patch.firstName !== undefined || patch.lastName !== undefined) {
    const parts = [user.firstName, user.lastName].filter((part) => part !== null && part !== '');
    user.fullname = parts.length > 0 ? parts.join(' ') : null;
    user.name = user.fullname;
  }
  if (patch.language !== undefined) user.language = patch.language;
  if (patch.login !== undefined) user.login = patch.login;
  const data = user.additionalData;
  let contactChanged = false;
  for (const field of CONTACT_FIELDS) {
    if (patch[field] === undefined) continue;
    data[field] = patch[field] ?? null;
    contactChanged = true;
  }
  if (contactChanged) {
    // The first contact detail gives a blank additionalData its own record.
    if (data.id === null) Object.assign(data, { id: state.counters.nextContactId++, createdAt: now });
    data.updatedAt = now;
  }
  user.updatedAt = now;
  state.touchUser(user.id);
}
