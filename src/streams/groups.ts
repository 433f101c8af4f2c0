import { integer, nullable, object, optional, string, type Schema } from '../upstream/schemas.js';
import { describeStream } from './stream.js';

/** A group of students with its teacher (a user). Unknown fields are kept. */
export interface Group {
  id: number;
  name?: string | null;
  teacherUserId?: number | null;
  [field: string]: unknown;
}

export const groupSchema: Schema<Group> = object({ id: integer, name: optional(nullable(string)), teacherUserId: optional(nullable(integer)) });

/** `GET /api/v2/groups`: the school's groups. Polled only when a connector takes it or `poll.streams` lists it. */
export const groups = describeStream({
  name: 'groups',
  list: { path: '/api/v2/groups', array: ['data', 'groups'] },
  key: { field: 'id', type: 'integer' },
  schema: groupSchema,
  alwaysPolled: false,
  sheets: { tab: 'Groups', columns: { name: 'Name', teacherUserId: 'Teacher user id', createdAt: 'Created', updatedAt: 'Updated' } },
});
