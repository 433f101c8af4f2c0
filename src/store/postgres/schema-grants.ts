import { SCHEMA } from './schema.js';

/**
 * The grants that let a role of store.url run the store, as fixes to paste: the daemon's start
 * (pg-store.ts) names them when PostgreSQL refuses, `config check --connect` before it would.
 */

/** For a role that may not create the schema: `role` and `database` quoted as SQL names them. */
export function createSchemaFix(role: string, database: string): string {
  return `GRANT CREATE ON DATABASE ${database} TO ${role}, or create the schema ${SCHEMA} owned by that role`;
}

/** For a schema another role made, which this one may not create in. */
export function ownSchemaFix(role: string): string {
  return `ALTER SCHEMA ${SCHEMA} OWNER TO ${role}`;
}
