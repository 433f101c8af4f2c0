import { userInfo } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { BridgeError } from '../../errors.js';
import { storeError } from '../errors.js';
import type { HealthState } from '../health.js';
import type { StoreTimings } from '../timings.js';
import type { OperationName, Operations, Self } from './operations.js';
import type { Call, FromThread, ToThread, WireError } from './protocol.js';

/**
 * The daemon's side of the database thread (db-thread.ts): it starts the thread, sends it the calls
 * of the port's methods by name (operations.ts) and settles each call's promise with its result.
 * Calls made in one turn of the event loop travel as one message, so the thread commits them
 * together. A failure that says SQLite cannot write now marks the store unhealthy (health.ts).
 */
export type Args<K extends OperationName> = Operations[K] extends (db: never, ...args: infer A) => unknown ? A : never;
export type Out<K extends OperationName> = ReturnType<Operations[K]>;
export type CallThread = <K extends OperationName>(op: K, ...args: Args<K>) => Promise<Out<K>>;

export interface ThreadClient {
  call: CallThread;
  /** Starts the thread on the database file; resolves once the schema is migrated. */
  open(file: string, self: Self, restartFrames?: number): Promise<void>;
  /** Asks the thread to close its database and end; resolves once it has (or was terminated). */
  close(): Promise<void>;
  terminate(): Promise<void>;
}

/** What SQLite says when it cannot write now but may later (a full disk, I/O trouble). */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|NOMEM|BUSY|LOCKED|PROTOCOL)/;

/** Calls that only read: their failure does not say the store cannot write. */
const READS: ReadonlySet<OperationName> = new Set<OperationName>([
  'getEvent', 'quarantined', 'getDelivery', 'list', 'listDead', 'rowCounts', 'owedCounts', 'nextRunAt', 'size', 'version', 'indexPage', 'rows', 'scan', 'createdPending', 'ranges', 'getState', 'live',
  'searchInbox', 'lookup', 'retrying', 'runs', 'tallies', 'attempts', 'searchPeople', 'getPeople',
]);

/** How long a thread asked to close may take before it is terminated. */
const CLOSE_WAIT_MS = 5000;

/**
 * What to do about a database SQLite finds damaged, or may not write: the file, and the fix. Other
 * errors say enough with their code (a full disk) or are bugs.
 */
export function fixFor(code: string, file: string, named = false): string {
  if (!file) return '';
  const which = named ? 'the file' : file;
  if (/^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
    return ` (${which} is damaged: stop the daemon and restore a backup as the README says, without the old -wal and -shm files, or move the three files away to start an empty store)`;
  }
  if (/^SQLITE_READONLY/.test(code)) {
    return ` (${which}, or its -wal or -shm file beside it, may not be written by user ${userInfo().username}: make all three writable)`;
  }
  return '';
}

export function createThreadClient(options: { log: Logger; clock: Clock; health: HealthState; isOpen: () => boolean; timings?: StoreTimings | undefined }): ThreadClient {
  const { log, clock, health, timings } = options;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; op: OperationName }>();
  let nextId = 1;
  let thread: Worker | undefined;
  let closed: (() => void) | undefined;
  /** The database file, named in what to do about an error that needs a person. */
  let opened = '';

  function toError(op: OperationName, error: WireError): BridgeError {
    const unavailable = UNAVAILABLE.test(error.code);
    if (unavailable && !READS.has(op)) health.failed(`${error.code}: ${error.message}`, clock.now());
    return storeError(unavailable, `${error.code}: ${error.message}${fixFor(error.code, opened)}`, error);
  }

  function onMessage(message: FromThread): void {
    if (message.t === 'closed') return closed?.();
    if (message.t !== 'results') return;
    // Rows written and committed: the store can write (a transaction that wrote nothing proves nothing).
    if (message.wrote) health.succeeded();
    if (timings) {
      if (message.transactionMs !== undefined) timings.transaction(message.transactionMs / 1000);
      for (const ms of message.syncMs ?? []) timings.sync(ms / 1000);
    }
    for (const result of message.results) {
      const call = pending.get(result.id);
      if (!call) continue;
      pending.delete(result.id);
      if (result.error) call.reject(toError(call.op, result.error));
      else call.resolve(result.value);
    }
  }

  /** Calls not posted yet, and the memory they hand over (a fresh snapshot's bytes). */
  let outgoing: Call[] = [];
  let transfer: ArrayBuffer[] = [];
  function flush(): void {
    const calls = outgoing;
    const handed = transfer;
    outgoing = [];
    transfer = [];
    if (calls.length > 0) thread?.postMessage({ t: 'calls', calls } satisfies ToThread, handed);
  }

  const call: CallThread = (op, ...args) => {
    if (!thread || !options.isOpen()) return Promise.reject(new BridgeError('store.closed', 'the store is not open', { retryable: true }));
    const id = nextId++;
    if (op === 'stageFresh') transfer.push((args[1] as { bytes: Uint8Array }).bytes.buffer as ArrayBuffer);
    // At the end of this turn of the event loop: the calls of every request read in it go together.
    if (outgoing.push({ id, op, args }) === 1) setImmediate(flush);
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, op });
    });
  };

  function failAll(error: Error): void {
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.reject(error);
    }
  }

  async function open(file: string, self: Self, restartFrames?: number): Promise<void> {
    opened = file;
    const worker = new Worker(new URL('./db-thread-boot.mjs', import.meta.url));
    thread = worker;
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: FromThread) => {
        if (message.t === 'opened') resolve();
        else if (message.t === 'open-failed') reject(storeError(false, `cannot open ${file}: ${message.error.code}: ${message.error.message}${fixFor(message.error.code, file, true)}`));
      });
      worker.once('error', reject);
      worker.postMessage({ t: 'open', file, self, restartFrames } satisfies ToThread);
    });
    worker.on('message', onMessage);
    worker.on('error', (error) => log.error({ err: error }, 'the store\'s database thread failed'));
    worker.on('exit', (code) => {
      thread = undefined;
      failAll(storeError(true, `the database thread exited (${code})`));
      if (options.isOpen()) {
        health.failed(`the database thread exited (${code})`, clock.now());
        log.fatal({ code }, 'the store\'s database thread exited');
      }
      closed?.();
    });
  }

  return {
    call,
    open,
    async close() {
      const worker = thread;
      if (worker) {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        await new Promise<void>((resolve) => {
          closed = resolve;
          worker.postMessage({ t: 'close' } satisfies ToThread);
        });
        // The thread ends by itself once closed; only one that does not is terminated.
        const late = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
        await exited;
        clearTimeout(late);
      }
      failAll(new BridgeError('store.closed', 'the store is closed', { retryable: true }));
    },
    async terminate() {
      await thread?.terminate();
    },
  };
}
