import { integer, object, type Schema } from '../upstream/schemas.js';
import { describeStream } from './stream.js';
import { flag, userSchema, type User } from './users.js';

/** API v2 student: its user, and the user's parent user, nested. Unknown fields are kept. */
export interface Student {
  id: number;
  isAdult?: number | null;
  isActive?: number | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  user: User;
  [field: string]: unknown;
}

export const studentSchema: Schema<Student> = object({ id: integer, isAdult: flag, isActive: flag, user: userSchema });

/** `GET /api/v2/students`: every student with its user and parent user. */
export const students = describeStream({
  name: 'students',
  list: { path: '/api/v2/students', array: ['data', 'students'] },
  key: { field: 'id', type: 'integer' },
  schema: studentSchema,
  // The roster export is made of the students' snapshot.
  alwaysPolled: true,
  person: { noun: 'student', user: ['user'] },
  sheets: {
    tab: 'Students',
    columns: {
      'user.firstName': 'First name', 'user.lastName': 'Last name', 'user.login': 'Login',
      'user.additionalData.email': 'Email', 'user.additionalData.phone': 'Phone', 'user.additionalData.mobile': 'Mobile',
      'user.additionalData.street': 'Street', 'user.additionalData.zipCode': 'Zip code', 'user.additionalData.city': 'City',
      'user.language': 'Language', isActive: 'Active', isAdult: 'Adult', 'user.isArchived': 'Archived',
      'user.parentUser.firstName': 'Parent first name', 'user.parentUser.lastName': 'Parent last name',
      'user.parentUser.additionalData.email': 'Parent email', 'user.parentUser.additionalData.phone': 'Parent phone',
      createdAt: 'Created', updatedAt: 'Updated',
    },
  },
});
