import { fdatasync } from 'node:fs';
import { Worker, parentPort } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { openDatabase, pragma } from './handles.js';
import { BATCH, BULK, operations, type OperationName, type Operations, type Self } from './operations.js';
import { migrate } from './schema.js';
import { startHeapReports } from '../../thread-heap.js';
import type { Call, FromThread, ToThread, WireError } from './protocol.js';
import { endClaims, runTransaction, syncFailure, wire } from './transaction.js';
import { WalSync } from './wal-sync.js';

/**
 * The SQLite database thread: it owns the connection and runs every store call, so the daemon's
 * event loop never waits for the disk. Calls queued while a transaction runs share the next one
 * (group commit), and no call fails another: a transaction with a failing call is run again with
 * each call in a savepoint of its own. A transaction's results leave the thread once its commit is
 * on disk (wal-sync.ts), while the thread goes on with the next one. A connector's claim or
 * settlement and a bulk call (operations.ts) each get a transaction of their own, after the small
 * calls queued with them, so a webhook's commit never shares one with a batch's rows or a chunk of a
 * poll, and waits behind at most one of each.
 */
const port = parentPort;
if (!port) throw new Error('db-thread.ts runs only as a worker thread');

let db: Database.Database | undefined;
let ops: Operations | undefined;
const urgent: Call[] = [];
const batches: Call[] = [];
const bulk: Call[] = [];
let scheduled = false;
let closing = false;

const post = (message: FromThread) => port.postMessage(message);

/** WAL frames (of 4 KiB) past which the checkpointer makes the WAL start over. */
const RESTART_FRAMES = 8192;
/** How often the checkpointer looks for WAL frames to copy back. */
const CHECKPOINT_INTERVAL_MS = 200;
/** What the WAL file is cut back to after it was reset (a first poll cycle grows it to hundreds of MB). */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;
let checkpointer: Worker | undefined;
let stopHeapReports = () => {};
let walSync: WalSync | undefined;
/**
 * The WAL starts over in two steps (restartWal): `due` once the checkpointer has copied a long WAL
 * back (bulk calls are held from then on), `ready` once it has also copied what they wrote meanwhile.
 */
let restartDue = false;
let restartReady = false;
let restartReadySince = 0;
/**
 * How long a ready restart waits for every commit to be on disk: a steady stream of small commits
 * may never leave the WAL's sync idle, and the bulk calls are held until the WAL has started over.
 */
const RESTART_WAIT_MS = 100;

function open(file: string, self: Self, restartFrames = RESTART_FRAMES): void {
  db = openDatabase(file);
  pragma(db, 'journal_mode = WAL');
  // A commit writes its frames to the WAL file, which walSync then syncs before any result of it is
  // released: a webhook is acknowledged only once its commit is on disk, as with synchronous = FULL.
  pragma(db, 'synchronous = NORMAL');
  walSync = new WalSync(`${file}-wal`, timedSync, schedule);
  pragma(db, 'busy_timeout = 5000');
  pragma(db, 'cache_size = -16000');
  pragma(db, `journal_size_limit = ${WAL_SIZE_LIMIT}`);
  migrate(db);
  ops = operations(self);
  startCheckpointer(file, restartFrames);
  stopHeapReports = startHeapReports('database');
}

/** The WAL syncs that ended since results were last posted (ms): they go with the next results. */
const syncs: number[] = [];

function timedSync(fd: number, done: (error: NodeJS.ErrnoException | null) => void): void {
  const started = performance.now();
  fdatasync(fd, (error) => {
    if (!error) syncs.push(performance.now() - started);
    done(error);
  });
}

/** Checkpoints move to their own thread (checkpoint-thread.mjs); if it dies, SQLite's own come back. */
function startCheckpointer(file: string, restartFrames: number): void {
  const conn = db!;
  pragma(conn, 'wal_autocheckpoint = 0');
  const worker = new Worker(new URL('./checkpoint-thread.mjs', import.meta.url), { workerData: { file, intervalMs: CHECKPOINT_INTERVAL_MS, restartFrames } });
  worker.unref();
  worker.on('error', () => {});
  worker.on('message', (message: { t: 'restart' | 'caught-up' }) => {
    if (message.t === 'restart') {
      restartDue = true;
      worker.postMessage({ t: 'catch-up' });
    } else if (message.t === 'caught-up' && restartDue) {
      restartReady = true;
      restartReadySince = performance.now();
      schedule();
      setTimeout(schedule, RESTART_WAIT_MS);
    }
  });
  worker.on('exit', () => {
    if (checkpointer === worker && db === conn) pragma(conn, 'wal_autocheckpoint = 1000');
    if (checkpointer !== worker) return;
    checkpointer = undefined;
    // Nothing will catch up any more: the bulk calls held for it go on.
    restartDue = false;
    restartReady = false;
    schedule();
  });
  checkpointer = worker;
}

/**
 * SQLite starts the WAL over only when a write transaction begins with every frame copied back,
 * which a writer committing back to back (a poll's bulk calls) never does by itself: the WAL would
 * grow by the whole snapshot, every commit appending to a growing file. So once the checkpointer has
 * copied a long WAL back it pauses; the writer holds its bulk calls and the checkpointer copies what
 * they wrote meanwhile; then the writer, between two transactions, copies the few frames written
 * since (small calls') and starts the WAL over (RESTART). Copying and syncing a bulk call's frames
 * here instead would hold every webhook's commit behind them. It does not wait for a reader (a
 * command reading beside the daemon): then the next round tries again.
 */
function restartWal(conn: Database.Database): void {
  restartDue = false;
  restartReady = false;
  try {
    pragma(conn, 'busy_timeout = 0');
    pragma(conn, 'wal_checkpoint(RESTART)');
  } catch {
    // the checkpointer goes on; the next round tries again
  } finally {
    pragma(conn, 'busy_timeout = 5000');
    checkpointer?.postMessage({ t: 'resume' });
  }
}

/** How long a repair waits for a reader (a command beside the daemon) to let the WAL start over. */
const REPAIR_WAIT_MS = 100;

/**
 * After a sync of the WAL failed, its frames are not known to be on disk even once a later sync
 * succeeds (wal-sync.ts): Linux may have marked the failed pages clean without writing them. While
 * they are in the page cache, a checkpoint that copies the whole WAL into the database file, syncs
 * that and truncates the WAL writes them anew, and later frames start a fresh WAL rather than
 * follow a hole that recovery would stop at. Until one succeeds no call runs and nothing is
 * released: a webhook answered 503 and sent again must not be acknowledged as a duplicate of a row
 * that may not be on disk. Gives the error the calls are refused with, or nothing once repaired.
 */
function repairWal(conn: Database.Database): WireError | undefined {
  const refused = checkpointWhole(conn);
  if (refused) walSync!.repairFailed(Object.assign(new Error(refused.message), { wire: refused }));
  else walSync!.repaired();
  return refused;
}

/**
 * Copies the whole WAL into the database file (synced by SQLite) and empties it, then syncs the
 * emptied WAL file: SQLite does not sync that truncation, and a WAL that came back with its hole
 * after a power cut would have recovery take the frames before the hole for newer than the file.
 */
function checkpointWhole(conn: Database.Database): WireError | undefined {
  try {
    pragma(conn, `busy_timeout = ${REPAIR_WAIT_MS}`);
    const [result] = conn.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (result?.busy !== 0) return { code: 'SQLITE_BUSY', message: 'the WAL cannot be copied back whole while a reader holds it' };
  } catch (error) {
    return wire(error);
  } finally {
    pragma(conn, 'busy_timeout = 5000');
  }
  try {
    walSync!.syncNow();
    return undefined;
  } catch (error) {
    return syncFailure(error as NodeJS.ErrnoException);
  }
}

/** Stops the checkpointer before the writer closes (the last connection to close checkpoints whole). */
async function stopCheckpointer(): Promise<void> {
  const worker = checkpointer;
  if (!worker) return;
  checkpointer = undefined;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage({ t: 'stop' });
  await exited;
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(drain);
}

function drain(): void {
  scheduled = false;
  if (!db || !ops) return;
  const refused = walSync!.needsRepair() ? repairWal(db) : undefined;
  if (refused) {
    const calls = [...urgent.splice(0), ...batches.splice(0), ...bulk.splice(0)];
    if (calls.length > 0) post({ t: 'results', results: calls.map((call) => ({ id: call.id, error: refused })) });
    if (closing) finishClose();
    return;
  }
  // The WAL starts over between two transactions once every commit is on disk: its RESTART syncs
  // the WAL and the database file, which would otherwise wait behind a bulk call's sync in flight,
  // and every commit after it with them.
  if (restartReady && (walSync!.idle() || performance.now() - restartReadySince >= RESTART_WAIT_MS)) restartWal(db);
  // The small calls commit first, on their own: a webhook's commit never waits for a bulk call's
  // rows to be written and synced with it.
  const batch = urgent.splice(0);
  if (batch.length > 0) run(db, ops, batch);
  // Then one claim or settlement, in order (a settlement and the claim that follows it): a webhook
  // read meanwhile commits before the next.
  if (batches.length > 0) run(db, ops, [batches.shift()!]);
  // A bulk call starts only once every commit before it is on disk: the sync a webhook's commit
  // waits for then holds its own frames and not those of bulk calls run meanwhile, as when each
  // commit synced itself; the small calls still run while a bulk call's commit is synced. Nor while
  // the WAL is to start over: the checkpointer's "caught-up" drains again.
  const bulkMay = walSync!.idle() && !restartDue;
  if (bulkMay && bulk.length > 0) run(db, ops, [bulk.shift()!]);
  if (restartReady) afterSync();
  if (urgent.length > 0 || batches.length > 0 || (bulkMay && bulk.length > 0)) schedule();
  else if (bulk.length > 0) {
    if (!restartDue) afterSync();
  } else if (closing) finishClose();
}

let awaitingSync = false;

/** Drains again once the commits before are on disk (a bulk call is waiting for that). */
function afterSync(): void {
  if (awaitingSync) return;
  awaitingSync = true;
  void walSync!.drained().then(() => {
    awaitingSync = false;
    schedule();
  });
}

/**
 * Runs the calls in one transaction (transaction.ts) and gives their results once the commit is on
 * disk (wal-sync.ts); a call never learns of a transaction that did not commit.
 */
function run(conn: Database.Database, table: Operations, batch: Call[]): void {
  const failAll = (error: WireError) => post({ t: 'results', results: batch.map((call) => ({ id: call.id, error })) });
  const started = performance.now();
  const outcome = runTransaction(conn, table, batch);
  const transactionMs = performance.now() - started;
  if ('failed' in outcome) return failAll(outcome.failed);
  const { results, wrote } = outcome;
  walSync!.committed(wrote, (error) => {
    if (!error) return post({ t: 'results', results, wrote, transactionMs, ...(syncs.length > 0 ? { syncMs: syncs.splice(0) } : {}) });
    endClaims(conn, batch, results);
    failAll((error as { wire?: WireError }).wire ?? syncFailure(error as NodeJS.ErrnoException));
  });
}

const queueOf = (op: OperationName): Call[] => (BULK.has(op) ? bulk : BATCH.has(op) ? batches : urgent);

let closeStarted = false;

function finishClose(): void {
  if (closeStarted) return;
  closeStarted = true;
  void Promise.all([stopCheckpointer(), walSync?.drained()]).finally(() => {
    walSync?.close();
    stopHeapReports();
    db?.close();
    db = undefined;
    post({ t: 'closed' });
    // Nothing is left to keep the thread alive: it ends by itself, its connection closed, rather
    // than being terminated from outside while the native addon tears down.
    port?.close();
  });
}

port.on('message', (message: ToThread) => {
  switch (message.t) {
    case 'open':
      try {
        open(message.file, message.self, message.restartFrames);
        post({ t: 'opened' });
      } catch (error) {
        db?.close();
        db = undefined;
        post({ t: 'open-failed', error: wire(error) });
      }
      return;
    case 'calls':
      for (const call of message.calls) queueOf(call.op as OperationName).push(call);
      schedule();
      return;
    case 'close':
      closing = true;
      if (!scheduled) finishClose();
      return;
  }
});
