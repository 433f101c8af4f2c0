// The checkpointer: a connection of its own, in a thread of its own, that copies the WAL back into
// the database file. The database thread turns SQLite's automatic checkpoint off, which would
// otherwise run inside whichever commit crossed the threshold and make that commit (a webhook's, say)
// wait for megabytes of copying and an fsync. Past `restartFrames` it pauses and asks the writer to
// start the WAL over (db-thread.ts): the writer holds its bulk calls and asks it to catch up, it
// copies what they wrote meanwhile (here, not in the writer's thread), and the writer then starts
// the WAL over with only a few frames left to copy; then it goes on.
//
// Plain JavaScript, unlike the rest: it needs none of the sources, so its thread starts without
// loading them (src/load-typescript.mjs), at every opening of a store (every command).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const port = parentPort;
if (!port) throw new Error('checkpoint-thread.mjs runs only as a worker thread');
/** @type {{ file: string; intervalMs: number; restartFrames: number }} */
const { file, intervalMs, restartFrames } = workerData;

// The connection and its statements stay referenced for the thread's life: a better-sqlite3 object
// left to the garbage collector can abort Node.js 24 as the thread ends (handles.ts).
const db = new Database(file, { fileMustExist: true });
const settings = [db.prepare('PRAGMA synchronous = FULL'), db.prepare('PRAGMA cache_size = -2000')];
for (const setting of settings) setting.run();
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

/**
 * Frames the writer may be left to copy when it starts the WAL over: a webhook's commit waits while
 * it copies and syncs them, so a few small commits' worth, not a bulk call's.
 */
const LEFT_FRAMES = 64;
/** Passes to catch up at most: commits go on meanwhile, and a reader can hold frames back. */
const CATCH_UP_PASSES = 8;

let paused = false;

/** @returns {{ busy: number; log: number; checkpointed: number } | undefined} */
function pass() {
  try {
    return checkpoint.get();
  } catch {
    // Tried again at the next tick; a failing disk shows in the writer's commits and in /readyz.
    return undefined;
  }
}

const timer = setInterval(() => {
  if (paused) return;
  const done = pass();
  if (done && done.log >= restartFrames && done.checkpointed === done.log) {
    paused = true;
    port.postMessage({ t: 'restart' });
  }
}, intervalMs);

/** The writer holds its bulk calls: copy what they wrote since the last pass, then tell it. */
function catchUp() {
  for (let i = 0; i < CATCH_UP_PASSES; i++) {
    const done = pass();
    if (done && done.log - done.checkpointed <= LEFT_FRAMES) break;
  }
  port.postMessage({ t: 'caught-up' });
}

port.on('message', (/** @type {{ t: 'stop' | 'resume' | 'catch-up' }} */ message) => {
  if (message.t === 'resume') paused = false;
  if (message.t === 'catch-up') catchUp();
  if (message.t !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close();
});
