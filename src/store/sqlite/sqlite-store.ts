import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { BridgeError } from '../../errors.js';
import { storeError } from '../errors.js';
import { createHealth } from '../health.js';
import { createLocalRoles } from '../local-roles.js';
import { startHeartbeat } from '../heartbeat.js';
import { refuseOldFormat } from '../old-format.js';
import type { Store } from '../port.js';
import { acquireLock, type HeldLock } from './lock.js';
import type { OperationName, Operations, Self } from './operations.js';
import type { Call, FromThread, ToThread, WireError } from './protocol.js';

export interface SqliteStoreOptions {
  dir: string;
  log: Logger;
  clock?: Clock;
  /** Heartbeat interval (default 5 s). */
  heartbeatMs?: number;
}

export const DATABASE_FILE = 'schoolbridge.db';

type Args<K extends OperationName> = Operations[K] extends (db: never, ...args: infer A) => unknown ? A : never;
type Out<K extends OperationName> = ReturnType<Operations[K]>;

/** What SQLite says when it cannot write now but may later (a full disk, I/O trouble). */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|NOMEM|BUSY|LOCKED|PROTOCOL)/;

/** Calls that only read: their failure does not say the store cannot write. */
const READS: ReadonlySet<OperationName> = new Set<OperationName>([
  'getEvent', 'quarantined', 'getDelivery', 'list', 'counts', 'nextRunAt', 'size', 'version', 'index', 'rows', 'scan', 'createdPending', 'ranges', 'getState', 'live',
  'searchInbox', 'lookup', 'retrying', 'runs', 'tallies', 'attempts', 'searchPeople', 'getPeople',
]);

/**
 * The embedded store (docs/store.md): one SQLite database under `store.dir`, held by one process
 * (lock.ts), served by a database thread of its own (db-thread.ts) so that neither a commit's fsync
 * nor a poll's bulk writes hold the daemon's event loop.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const { dir, log } = options;
  const clock = options.clock ?? systemClock;
  const health = createHealth();
  const self: Self = { id: randomUUID(), host: hostname(), pid: process.pid, startedAt: clock.now() };
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void; op: OperationName }>();
  let nextId = 1;
  let thread: Worker | undefined;
  let lock: HeldLock | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let url: string | undefined;
  let state: 'new' | 'open' | 'closed' = 'new';
  let closed: (() => void) | undefined;

  function toError(op: OperationName, error: WireError): BridgeError {
    const unavailable = UNAVAILABLE.test(error.code);
    if (unavailable && !READS.has(op)) health.failed(`${error.code}: ${error.message}`, clock.now());
    return storeError(unavailable, `${error.code}: ${error.message}`, error);
  }

  function onMessage(message: FromThread): void {
    if (message.t === 'closed') return closed?.();
    if (message.t !== 'results') return;
    // Rows written and committed: the store can write (a transaction that wrote nothing proves nothing).
    if (message.wrote) health.succeeded();
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

  function call<K extends OperationName>(op: K, ...args: Args<K>): Promise<Out<K>> {
    if (!thread || state !== 'open') return Promise.reject(new BridgeError('store.closed', 'the store is not open', { retryable: true }));
    const id = nextId++;
    if (op === 'stageFresh') transfer.push((args[1] as { bytes: Uint8Array }).bytes.buffer as ArrayBuffer);
    // At the end of this turn of the event loop: the calls of every request read in it go together.
    if (outgoing.push({ id, op, args }) === 1) setImmediate(flush);
    return new Promise<Out<K>>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, op });
    });
  }

  function failAll(error: Error): void {
    for (const [id, waiting] of pending) {
      pending.delete(id);
      waiting.reject(error);
    }
  }

  async function openThread(file: string): Promise<void> {
    const worker = new Worker(new URL('./db-thread-boot.mjs', import.meta.url));
    thread = worker;
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: FromThread) => {
        if (message.t === 'opened') resolve();
        else if (message.t === 'open-failed') reject(storeError(false, `cannot open ${file}: ${message.error.code}: ${message.error.message}`));
      });
      worker.once('error', reject);
      worker.postMessage({ t: 'open', file, self } satisfies ToThread);
    });
    worker.on('message', onMessage);
    worker.on('error', (error) => log.error({ err: error }, 'the store\'s database thread failed'));
    worker.on('exit', (code) => {
      thread = undefined;
      failAll(storeError(true, `the database thread exited (${code})`));
      if (state === 'open') {
        health.failed(`the database thread exited (${code})`, clock.now());
        log.fatal({ code }, 'the store\'s database thread exited');
      }
      closed?.();
    });
  }

  const store: Store = {
    name: 'store',
    engine: 'sqlite',
    // One process holds the database (lock.ts): it has every role, and nobody else changes anything.
    shared: false,
    replicaId: self.id,
    roles: createLocalRoles(self.id),
    watch: () => () => {},
    inbox: {
      accept: (entry, records) => call('accept', entry, records),
      get: (id) => call('getEvent', id),
      reprocess: (id, expected, recordIds, records) => call('reprocess', id, expected, recordIds, records, clock.now()),
      quarantine: (entry) => call('quarantine', entry),
      quarantined: () => call('quarantined'),
      release: (id, entry, records) => call('release', id, entry, records),
      prune: (before) => call('prune', before),
      search: (texts, limit) => call('searchInbox', texts, limit),
    },
    outbox: {
      enqueue: (records, patch = {}) => call('enqueue', records, clock.now(), patch),
      claim: (request) => call('claim', request),
      settle: (settlements) => call('settle', settlements),
      retry: (target, now) => call('retry', target, now),
      get: (id) => call('getDelivery', id, clock.now()),
      list: (filter) => call('list', filter, clock.now()),
      counts: () => call('counts'),
      ranges: () => call('ranges'),
      nextRunAt: (connector) => call('nextRunAt', connector, clock.now()),
      sweep: (now) => call('sweep', now),
      lookup: (query) => call('lookup', query, clock.now()),
      retrying: () => call('retrying'),
    },
    snapshot: {
      size: (stream) => call('size', stream),
      version: (stream) => call('version', stream),
      index: (stream) => call('index', stream),
      rows: (stream, keys) => call('rows', stream, keys),
      scan: (stream, after, limit) => call('scan', stream, after, limit),
      begin: (stream, kind) => call('begin', stream, kind),
      stageFresh: (stream, rows) => call('stageFresh', stream, rows),
      stageChanges: (stream, rows) => call('stageChanges', stream, rows),
      discard: (stream) => call('discard', stream),
      applyFresh: (stream, apply) => call('applyFresh', stream, apply.state, apply.created),
      applyChanges: (stream, apply) => call('applyChanges', stream, apply.limit, apply.connectors, apply.state, apply.now),
      materializeCreated: (stream, limit, now) => call('materializeCreated', stream, limit, now),
      createdPending: (stream) => call('createdPending', stream),
    },
    state: {
      get: async <T>(key: string) => (await call('getState', key)) as T | undefined,
      put: (patch) => call('putState', patch),
    },
    history: {
      recordRun: (run, patch = {}) => call('recordRun', run, patch),
      runs: (query) => call('runs', query),
      count: (entries) => call('count', entries),
      tallies: (kind, since) => call('tallies', kind, since),
      attempts: (filter) => call('attempts', filter),
      prune: (before) => call('pruneHistory', before),
    },
    people: {
      refresh: (stream, limit) => call('refreshPeople', stream, limit),
      search: (query, limit) => call('searchPeople', query, limit),
      get: (refs) => call('getPeople', refs),
    },
    replicas: {
      beat: (now, at) => call('beat', now, at ?? url),
      live: (since) => call('live', since),
    },
    health: () => (state === 'open' ? health.current() : { ok: false, reason: 'store not open', since: self.startedAt }),
    onHealth: (listener) => health.on(listener),
    async advertise(at, sandboxUrl) {
      url = at;
      await lock?.update({ adminUrl: at, ...(sandboxUrl ? { sandboxUrl } : {}) });
      await store.replicas.beat(clock.now(), at);
    },
    async start() {
      if (state !== 'new') return;
      await mkdir(dir, { recursive: true });
      await refuseOldFormat(dir);
      lock = await acquireLock(dir);
      try {
        await openThread(path.join(dir, DATABASE_FILE));
        state = 'open';
        // The lock is ours, so every other replica row is a process that died holding it: its
        // leases are free now, not after its heartbeat runs out.
        await call('takeOver');
        await store.replicas.beat(clock.now());
        await store.outbox.sweep(clock.now());
      } catch (error) {
        state = 'closed';
        await thread?.terminate();
        lock.release();
        throw error;
      }
      heartbeat = startHeartbeat({ beat: () => store.replicas.beat(clock.now()), health, clock, log, intervalMs: options.heartbeatMs ?? 5000 });
      log.info({ dir, engine: 'sqlite' }, 'store opened');
    },
    async stop() {
      if (state !== 'open') return;
      await heartbeat?.stop();
      await call('leave').catch(() => {});
      state = 'closed';
      const worker = thread;
      if (worker) {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        await new Promise<void>((resolve) => {
          closed = resolve;
          worker.postMessage({ t: 'close' } satisfies ToThread);
        });
        // The thread ends by itself once closed; only one that does not is terminated.
        const late = setTimeout(() => void worker.terminate(), 5000);
        await exited;
        clearTimeout(late);
      }
      failAll(new BridgeError('store.closed', 'the store is closed', { retryable: true }));
      lock?.release();
    },
  };
  return store;
}
