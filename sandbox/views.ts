import type { AdditionalData, Flag, Student, User } from './types.js';

/**
 * How the sandbox keeps records (rows, linked by id) and how they are shown: the list shape (integer
 * flags) and the write shape of create/update answers (flags as "0"/"1" strings, one-time passwords on
 * the user and on its parentUser). Key order follows docs/upstream.md.
 */
export interface UserRow extends Omit<User, 'parentUser'> {
  /** The parent user of a student's user; never shown as such. */
  parentUserId: number | null;
}

export interface StudentRow extends Omit<Student, 'user'> {
  userId: number;
}

export function emptyAdditionalData(): AdditionalData {
  return {
    id: null, phone: null, mobile: null, email: null, skype: null, street: null, zipCode: null, city: null,
    country: null, post: null, province: null, pesel: null, nipNumber: null, birthDate: null, birthPlace: null,
    description: null, billingName: null, billingStreet: null, billingCity: null, billingZipCode: null,
    billingNipNumber: null, billingPesel: null, billingEmail: null, createdAt: null, updatedAt: null,
  };
}

export function userView(row: UserRow, parentUser: User | null): User {
  return {
    id: row.id, login: row.login, name: row.name, firstName: row.firstName, lastName: row.lastName,
    fullname: row.fullname, systemRole: row.systemRole, isArchived: row.isArchived, photo: null,
    language: row.language, tosAccepted: row.tosAccepted, type: row.type, typeName: row.typeName,
    createdAt: row.createdAt, updatedAt: row.updatedAt, additionalData: { ...row.additionalData }, parentUser,
  };
}

export function studentView(row: StudentRow, user: UserRow, parent: UserRow | undefined): Student {
  return {
    id: row.id, isAdult: row.isAdult, isActive: row.isActive, createdAt: row.createdAt, updatedAt: row.updatedAt,
    user: userView(user, parent ? userView(parent, null) : null),
  };
}

const flagText = (flag: Flag): '0' | '1' => (flag === 1 ? '1' : '0');

/** The create/update answer: string flags and a one-time password on both users. */
export function studentWriteView(student: Student, passwords: { student: string; parent: string }): Record<string, unknown> {
  const { user } = student;
  const parent = user.parentUser;
  return {
    ...student,
    isAdult: flagText(student.isAdult),
    isActive: flagText(student.isActive),
    user: {
      ...user,
      isArchived: flagText(user.isArchived),
      parentUser: parent ? { ...parent, isArchived: flagText(parent.isArchived), oneTimePassword: passwords.parent } : null,
      oneTimePassword: passwords.student,
    },
  };
}
