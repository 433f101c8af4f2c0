import { groups } from './groups.js';
import { students } from './students.js';
import { users } from './users.js';

/**
 * The polled streams (docs/streams.md). A stream added here gets its list read, its records diffed
 * and delivered, its snapshot table (a store migration of its own) and its name in the config. The
 * order is the one cycles read them in and summaries list them in.
 */
export const POLLED_STREAMS = [students, users, groups] as const;
