import Database from 'better-sqlite3';
import { sql } from './statements.js';

/**
 * How this project opens SQLite connections and runs pragmas, so that no better-sqlite3 object is
 * ever destroyed by the garbage collector as a thread or the process ends.
 *
 * better-sqlite3 12's Database and Statement are node::ObjectWraps. On Node.js 24 an ObjectWrap
 * unregisters an environment cleanup hook when it is destroyed, and finds the environment through
 * the JavaScript context entered at that moment. An object whose last reference was dropped may be
 * collected while a thread or the process ends, outside any context: Node.js then aborts
 * (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook). An object still
 * referenced then is destroyed by the environment's own cleanup, inside it, which is safe. So every
 * connection is kept referenced for the life of its thread (a closed one holds no SQLite resources),
 * its statements with it (statements.ts caches them per connection), and a pragma runs through a
 * statement prepared once rather than the fresh one `db.pragma()` prepares and drops at every call.
 */
const connections = new Set<Database.Database>();

export function openDatabase(file: string, options?: Database.Options): Database.Database {
  const db = new Database(file, options);
  connections.add(db);
  return db;
}

/** `PRAGMA <text>`: its rows, if it has any. */
export function pragma(db: Database.Database, text: string): unknown[] {
  const statement = sql(db, `PRAGMA ${text}`);
  if (statement.reader) return statement.all();
  statement.run();
  return [];
}

/** The first column of a pragma's first row (`user_version`, say). */
export function pragmaValue(db: Database.Database, text: string): unknown {
  const row = sql(db, `PRAGMA ${text}`).get() as Record<string, unknown> | undefined;
  return row === undefined ? undefined : Object.values(row)[0];
}
