import { integer, nullable, object, optional, type Schema } from '../upstream/schemas.js';
import { describeStream } from './stream.js';

/** API v2 user (also a student's `user` and its `parentUser`). Unknown fields are kept. */
export interface User {
  id: number;
  login?: string | null;
  name?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  fullname?: string | null;
  systemRole?: string | null;
  isArchived?: number | null;
  language?: string | null;
  additionalData?: AdditionalData | null;
  parentUser?: User | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  [field: string]: unknown;
}

export interface AdditionalData {
  id?: number | null;
  phone?: string | null;
  mobile?: string | null;
  email?: string | null;
  street?: string | null;
  zipCode?: string | null;
  city?: string | null;
  [field: string]: unknown;
}

/** The flags are integers or null once normalized ("0"/"1" strings become integers). */
export const flag = optional(nullable(integer));
const additionalData = object({ id: optional(nullable(integer)) });

export const userSchema: Schema<User> = object(() => ({
  id: integer,
  isArchived: flag,
  additionalData: optional(nullable(additionalData)),
  parentUser: optional(nullable(userSchema)),
}));

/** `GET /api/v2/users`: every user (administrators, students' users, parents). */
export const users = describeStream({
  name: 'users',
  list: { path: '/api/v2/users', array: ['data', 'users'] },
  key: { field: 'id', type: 'integer' },
  schema: userSchema,
  // The accounting feed names an invoice's buyer from the users' snapshot.
  alwaysPolled: true,
  person: { noun: 'user', user: [] },
  sheets: {
    tab: 'Users',
    columns: {
      login: 'Login', firstName: 'First name', lastName: 'Last name', systemRole: 'Role',
      'additionalData.email': 'Email', 'additionalData.phone': 'Phone', 'additionalData.mobile': 'Mobile',
      language: 'Language', isArchived: 'Archived', createdAt: 'Created', updatedAt: 'Updated',
    },
  },
});
