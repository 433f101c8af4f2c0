import type Database from 'better-sqlite3';
import type { Claimed } from '../port.js';
import { leasesOf } from './leases.js';
import type { Operations } from './operations.js';
import type { Call, Result, WireError } from './protocol.js';
import { leaseId as rangeLeaseId } from './ranges.js';
import { logLeaseId } from './log.js';

/*
 * One transaction of the database thread (db-thread.ts): its calls together, or, if one fails, each
 * in a savepoint of its own.
 */

/** An error as it crosses to the daemon's thread: SQLite's code (`SQLITE_FULL`, …) and its message. */
export function wire(error: unknown): WireError {
  const e = error as { code?: unknown; message?: unknown };
  return { code: typeof e.code === 'string' ? e.code : 'ERROR', message: typeof e.message === 'string' ? e.message : String(error) };
}

/**
 * A sync of the WAL file that failed, as it crosses to the daemon's thread. Its code says which
 * system error it was; an ENOSPC says that the disk is full, as SQLite's own SQLITE_FULL does, so
 * /readyz gives the operator the same reason whichever of the two a full disk surfaced as.
 */
export function syncFailure(error: NodeJS.ErrnoException): WireError {
  const code = error.code ?? 'EIO';
  return { code: `SQLITE_IOERR_FSYNC (${code})`, message: code === 'ENOSPC' ? `the disk is full: ${error.message}` : error.message };
}

/**
 * How much a reason the store cannot write tells (health.ts). Of SQLite's answers, one that names a
 * full disk (SQLITE_FULL, a WAL sync's ENOSPC) over the others: a full disk also fails SQLite's own
 * fsyncs, with a bare "SQLITE_IOERR_FSYNC: disk I/O error" that carries no errno, and /readyz
 * should go on saying that the disk is full. Anything that is not SQLite's answer to a write (the
 * database thread exited) over all of them, and a busy WAL under all of them.
 */
export function outageRank(reason: string): number {
  if (!reason.startsWith('SQLITE_')) return 2;
  // A wait for a reader (or the checkpointer) to let go of the WAL: the repair of a failed sync
  // meets it, and it says nothing of why the store stopped writing.
  if (reason.startsWith('SQLITE_BUSY')) return -1;
  return /^SQLITE_FULL|^SQLITE_IOERR_FSYNC \(ENOSPC\)/.test(reason) ? 1 : 0;
}

/** The transaction statements, prepared once per connection. */
const control = new WeakMap<Database.Database, Record<'begin' | 'savepoint' | 'release' | 'rollbackTo' | 'commit' | 'rollback' | 'totalChanges', Database.Statement>>();

function statements(conn: Database.Database) {
  let prepared = control.get(conn);
  if (!prepared) {
    prepared = {
      begin: conn.prepare('BEGIN'), savepoint: conn.prepare('SAVEPOINT call'), release: conn.prepare('RELEASE call'),
      rollbackTo: conn.prepare('ROLLBACK TO call'), commit: conn.prepare('COMMIT'), rollback: conn.prepare('ROLLBACK'),
      totalChanges: conn.prepare('SELECT total_changes()').pluck(),
    };
    control.set(conn, prepared);
  }
  return prepared;
}

const totalChanges = (conn: Database.Database): number => statements(conn).totalChanges.get() as number;

function invoke(conn: Database.Database, table: Operations, call: Call): unknown {
  const fn = table[call.op] as (db: Database.Database, ...args: unknown[]) => unknown;
  return fn(conn, ...call.args);
}

/**
 * Runs the calls in one transaction, and says what each gave and whether rows were written, or why
 * the transaction did not commit. They run side by side first, with nothing between them: a
 * savepoint per call makes SQLite copy every page a call touches into a statement journal, which
 * costs more than the calls themselves. Only when one fails is the transaction rolled back and run
 * again with each call in a savepoint of its own, so that the failing one fails alone.
 */
export function runTransaction(conn: Database.Database, table: Operations, batch: readonly Call[]): { results: Result[]; wrote: boolean } | { failed: WireError } {
  const tx = statements(conn);
  const leases = leasesOf(conn);
  const changesBefore = totalChanges(conn);
  try {
    tx.begin.run();
  } catch (error) {
    return { failed: wire(error) };
  }
  leases.begin();
  let results: Result[] | undefined = [];
  try {
    for (const call of batch) results.push({ id: call.id, value: invoke(conn, table, call) });
  } catch {
    results = undefined;
  }
  if (!results) {
    if (conn.inTransaction) tx.rollback.run();
    leases.rollbackTo();
    try {
      tx.begin.run();
    } catch (error) {
      leases.commit();
      return { failed: wire(error) };
    }
    results = batch.map((call) => isolated(conn, table, call));
  }
  try {
    tx.commit.run();
    leases.commit();
  } catch (error) {
    if (conn.inTransaction) tx.rollback.run();
    leases.rollbackTo();
    leases.commit();
    // Nothing of this transaction is on disk: no call of it may report success.
    return { failed: wire(error) };
  }
  // Whether rows were written: only then does this transaction's success say the store can write (a
  // claim or a sweep goes through on a full disk, as it writes nothing).
  return { results, wrote: totalChanges(conn) !== changesBefore };
}

/**
 * Ends the leases that the claims of a transaction took whose results are not given (its sync
 * failed): their deliveries are due again at once rather than when the leases would run out.
 */
export function endClaims(conn: Database.Database, batch: readonly Call[], results: readonly Result[]): void {
  const leases = leasesOf(conn);
  batch.forEach((call, i) => {
    if (call.op !== 'claim' || !Array.isArray(results[i]?.value)) return;
    for (const { delivery } of results[i]!.value as Claimed[]) {
      const id = delivery.range ? rangeLeaseId(delivery.connector, delivery.range.stream, delivery.range.part)
        : delivery.log ? logLeaseId(delivery.connector, delivery.log.part) : delivery.id;
      leases.end(id, delivery.fence, delivery.leaseOwner ?? '');
    }
  });
}

/** One call in a savepoint of its own: if it fails, what it wrote (and the leases it moved) goes. */
function isolated(conn: Database.Database, table: Operations, call: Call): Result {
  const tx = statements(conn);
  const leases = leasesOf(conn);
  // An error such as a full disk can end the whole transaction: a savepoint now would open a new
  // one that commits by itself, apart from the calls before it.
  if (!conn.inTransaction) return { id: call.id, error: { code: 'SQLITE_ABORT', message: 'the transaction was rolled back by an earlier call' } };
  const mark = leases.mark();
  tx.savepoint.run();
  try {
    const value = invoke(conn, table, call);
    tx.release.run();
    return { id: call.id, value };
  } catch (error) {
    leases.rollbackTo(mark);
    try {
      tx.rollbackTo.run();
      tx.release.run();
    } catch {
      // the transaction is gone (SQLite rolled it back): the calls after this one fail, and COMMIT says so
    }
    return { id: call.id, error: wire(error) };
  }
}
