import type Database from 'better-sqlite3';

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/** A prepared statement, made once per connection and SQL text. */
export function sql(db: Database.Database, text: string): Database.Statement {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = db.prepare(text)));
  return statement;
}

/** Forgets a connection's statements (after its schema changed under them: a table swapped). */
export function forgetStatements(db: Database.Database): void {
  cache.delete(db);
}
