import type Database from 'better-sqlite3';

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * A prepared statement, made once per connection and SQL text, and kept as long as its connection
 * (handles.ts: a statement left to the garbage collector can abort Node.js 24 as its thread ends).
 * A table dropped and made again under the same name needs no new statement: SQLite prepares a
 * statement again by itself when the schema changed under it.
 */
export function sql(db: Database.Database, text: string): Database.Statement {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = db.prepare(text)));
  return statement;
}
