import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, pragma } from './handles.js';

/**
 * The checkpointer: a connection of its own, in a thread of its own, that copies the WAL back into
 * the database file. The database thread turns SQLite's automatic checkpoint off, which would
 * otherwise run inside whichever commit crossed the threshold and make that commit (a webhook's, say)
 * wait for megabytes of copying and an fsync. Past `restartFrames` it pauses and asks the writer to start the WAL over (db-thread.ts), and goes on when it has.
 */
const port = parentPort;
if (!port) throw new Error('checkpoint-thread.ts runs only as a worker thread');
const { file, intervalMs, restartFrames } = workerData as { file: string; intervalMs: number; restartFrames: number };

const db = openDatabase(file, { fileMustExist: true });
pragma(db, 'synchronous = FULL');
pragma(db, 'cache_size = -2000');

interface Checkpoint {
  busy: number;
  log: number;
  checkpointed: number;
}

let paused = false;

const timer = setInterval(() => {
  if (paused) return;
  try {
    const [done] = pragma(db, 'wal_checkpoint(PASSIVE)') as Checkpoint[];
    if (done && done.log >= restartFrames && done.checkpointed === done.log) {
      paused = true;
      port.postMessage({ t: 'restart' });
    }
  } catch {
    // Tried again at the next tick; a failing disk shows in the writer's commits and in /readyz.
  }
}, intervalMs);

port.on('message', (message: { t: 'stop' | 'resume' }) => {
  if (message.t === 'resume') paused = false;
  if (message.t !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close();
});
