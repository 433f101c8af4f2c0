import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BULK, operations, type OperationName, type Operations, type Self } from './operations.js';
import { migrate } from './schema.js';
import type { Call, FromThread, Result, ToThread, WireError } from './protocol.js';

/**
 * The SQLite database thread: it owns the connection and runs every store call, so the daemon's
 * event loop never waits for the disk. Calls queued while a transaction runs share the next one
 * (group commit: one fsync for all of them), each in a savepoint of its own so one failing call
 * does not undo the others. A transaction takes every queued call but at most one bulk call
 * (operations.ts), so a webhook's commit never waits behind more than one chunk of a poll.
 */
const port = parentPort;
if (!port) throw new Error('db-thread.ts runs only as a worker thread');

let db: Database.Database | undefined;
let ops: Operations | undefined;
const urgent: Call[] = [];
const bulk: Call[] = [];
let scheduled = false;
let closing = false;

const post = (message: FromThread) => port.postMessage(message);

function wire(error: unknown): WireError {
  const e = error as { code?: unknown; message?: unknown };
  return { code: typeof e.code === 'string' ? e.code : 'ERROR', message: typeof e.message === 'string' ? e.message : String(error) };
}

function open(file: string, self: Self): void {
  db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Each commit is on disk when it returns (the WAL is fsync'd): a webhook is acknowledged after it.
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -16000');
  migrate(db);
  ops = operations(self);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(drain);
}

function drain(): void {
  scheduled = false;
  if (!db || !ops) return;
  const batch = urgent.splice(0);
  const one = bulk.shift();
  if (one) batch.push(one);
  if (batch.length > 0) run(db, ops, batch);
  if (urgent.length > 0 || bulk.length > 0) schedule();
  else if (closing) finishClose();
}

/** The transaction statements, prepared once per connection. */
const control = new WeakMap<Database.Database, Record<'begin' | 'savepoint' | 'release' | 'rollbackTo' | 'commit' | 'rollback', Database.Statement>>();

function statements(conn: Database.Database) {
  let prepared = control.get(conn);
  if (!prepared) {
    prepared = {
      begin: conn.prepare('BEGIN'), savepoint: conn.prepare('SAVEPOINT call'), release: conn.prepare('RELEASE call'),
      rollbackTo: conn.prepare('ROLLBACK TO call'), commit: conn.prepare('COMMIT'), rollback: conn.prepare('ROLLBACK'),
    };
    control.set(conn, prepared);
  }
  return prepared;
}

function run(conn: Database.Database, table: Operations, batch: Call[]): void {
  const results: Result[] = [];
  const tx = statements(conn);
  const failAll = (error: unknown) => post({ t: 'results', results: batch.map((call) => ({ id: call.id, error: wire(error) })) });
  try {
    tx.begin.run();
  } catch (error) {
    failAll(error);
    return;
  }
  for (const call of batch) {
    tx.savepoint.run();
    try {
      const fn = table[call.op] as (db: Database.Database, ...args: unknown[]) => unknown;
      const value = fn(conn, ...call.args);
      tx.release.run();
      results.push({ id: call.id, value });
    } catch (error) {
      try {
        tx.rollbackTo.run();
        tx.release.run();
      } catch {
        // the transaction is gone (SQLite rolled it back): COMMIT below fails and says so
      }
      results.push({ id: call.id, error: wire(error) });
    }
  }
  try {
    tx.commit.run();
  } catch (error) {
    if (conn.inTransaction) tx.rollback.run();
    // Nothing of this transaction is on disk: no call of it may report success.
    failAll(error);
    return;
  }
  post({ t: 'results', results });
}

function finishClose(): void {
  db?.close();
  db = undefined;
  post({ t: 'closed' });
}

port.on('message', (message: ToThread) => {
  switch (message.t) {
    case 'open':
      try {
        open(message.file, message.self);
        post({ t: 'opened' });
      } catch (error) {
        db?.close();
        db = undefined;
        post({ t: 'open-failed', error: wire(error) });
      }
      return;
    case 'calls':
      for (const call of message.calls) (BULK.has(call.op as OperationName) ? bulk : urgent).push(call);
      schedule();
      return;
    case 'close':
      closing = true;
      if (!scheduled) finishClose();
      return;
  }
});
