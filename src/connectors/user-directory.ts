import type { SnapshotStore } from '../store/index.js';

/**
 * Read access to the users as the last poll cycle saw them (the snapshot), for connectors that name
 * the people a record is about (the accounting feed's buyer). A user the snapshot does not hold, or
 * none yet, is undefined.
 */
export interface UserDirectory {
  get(id: number): Promise<Record<string, unknown> | undefined>;
}

export function createUserDirectory(snapshot: Pick<SnapshotStore, 'rows'>): UserDirectory {
  return {
    async get(id) {
      const [row] = await snapshot.rows('users', [id]);
      return row ? (JSON.parse(row.body) as Record<string, unknown>) : undefined;
    },
  };
}
