import { mkdir, readdir, truncate } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import type { Logger } from 'pino';
import { BridgeError, describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import { ShardedMap } from '../sharded-map.js';
import { checkpointDue } from './checkpoint-policy.js';
import { CollectionFile, isWriteLeftover, removeGradually, type CollectionDocument } from './durable-file.js';
import { acquireLock, type LockInfo } from './lock.js';
import { Wal, readWal, type Op } from './wal.js';

export type { Op } from './wal.js';

export interface StoreOptions {
  /** Directory of the store; undefined keeps everything in memory (tests, dry runs). */
  dir?: string;
  log: Logger;
  /** Checkpoint once the WAL has grown past this many bytes or twice the documents (checkpoint-policy.ts). */
  checkpointBytes?: number;
  /** Also look this often, and checkpoint once the WAL holds a tenth of the documents (checkpoint-policy.ts). */
  checkpointIntervalMs?: number;
  /** Told the wall time of each WAL fsync, in ms: a slow disk delays every acknowledgement. */
  onFsync?: (ms: number) => void;
}

/**
 * The store (CONTRACT §7): named collections of JSON values, kept in memory, made durable by a
 * write-ahead log with group commit, and checkpointed into one lowdb document per collection.
 *
 * Values are immutable once committed: put a new object rather than changing a stored one, because
 * checkpoints serialize a shallow copy of a collection while commits go on.
 */
export interface Store extends Component {
  get<T>(collection: string, key: string): T | undefined;
  has(collection: string, key: string): boolean;
  /** In no particular order (collections are ShardedMaps): a caller that needs one sorts. */
  entries<T>(collection: string): IterableIterator<[string, T]>;
  size(collection: string): number;
  /**
   * Applies the ops in memory at once (readers see them immediately) and resolves when they are
   * durable. Rejects with `store.unavailable` (retryable) when the store cannot write; then the store
   * stays unhealthy until restarted, so nothing is ever acknowledged without being on disk.
   */
  commit(ops: Op[]): Promise<void>;
  /**
   * Applies the ops in memory only, without writing them: a crash forgets them. Only for state that
   * recovery rebuilds anyway, such as an outbox lease (every lease is pending again at start), where
   * a write per delivery batch would cost the WAL and the fsync without saving anything.
   */
  stage(ops: Op[]): void;
  /** Resolves when everything committed so far is durable. */
  durable(): Promise<void>;
  /**
   * Writes the collections changed so far into their documents and drops the log they make redundant.
   * If one is running it waits for it, then starts its own: that one may predate the caller's commits.
   */
  checkpoint(): Promise<void>;
  /**
   * Holds back the checkpoints the store would start by itself (after a commit, on its timer) until
   * the returned function is called; then one starts if one is due. For a bulk writer such as a
   * poll's first cycle: a checkpoint started halfway through its 400 MB of commits writes the big
   * collections once then, and again after. Explicit `checkpoint()` calls are not held.
   */
  holdCheckpoints(): () => void;
  health(): { ok: true } | { ok: false; reason: string };
  /**
   * `slowestFsyncMs`: the longest WAL fsync since the store opened (wall time, event-loop lag included);
   * `checkpoints`: how many were started since then, the store's own and asked for.
   */
  stats(): { walBytes: number; seq: number; slowestFsyncMs: number; checkpoints: number; collections: Record<string, number> };
  /** Records where the holding daemon can be reached (the lock file), for one-shot CLI commands. */
  advertise(patch: Partial<LockInfo>): Promise<void>;
  readonly dir: string | undefined;
}

const DOC_SUFFIX = '.db.json';
const NAME = /^[a-z0-9][a-z0-9._-]*$/i;

export function createStore(options: StoreOptions): Store {
  const { dir, log } = options;
  const checkpointBytes = options.checkpointBytes ?? 64 * 1024 * 1024;
  // Sharded: a first poll cycle grows two collections past 262,144 entries in the same commit chunk,
  // and growing a Map that size held the event loop 55-65 ms (sharded-map.ts).
  const collections = new Map<string, ShardedMap<unknown>>();
  const docSeq = new Map<string, number>();
  /** Bytes of each collection's document on disk (as last read or written). */
  const docBytes = new Map<string, number>();
  const due = (trigger: 'write' | 'timer') => {
    let total = 0;
    for (const bytes of docBytes.values()) total += bytes;
    return checkpointDue(trigger, wal?.bytes ?? 0, total, checkpointBytes);
  };
  const dirty = new Set<string>();
  let seq = 0;
  let wal: Wal | undefined;
  let lock: Awaited<ReturnType<typeof acquireLock>> | undefined;
  let open = false;
  let opening: Promise<void> | undefined;
  let checkpointing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let holds = 0;
  let checkpoints = 0;

  const collection = (name: string) => {
    let map = collections.get(name);
    if (!map) {
      if (!NAME.test(name)) throw new Error(`bad collection name ${name}`);
      map = new ShardedMap();
      collections.set(name, map);
    }
    return map;
  };

  const apply = (ops: Op[], atSeq: number, replay: boolean) => {
    for (const op of ops) {
      if (replay && atSeq <= (docSeq.get(op.c) ?? 0)) continue;
      const map = collection(op.c);
      if (op.op === 'put') map.set(op.k, op.v);
      else map.delete(op.k);
      dirty.add(op.c);
    }
  };

  async function recover(storeDir: string): Promise<void> {
    await mkdir(storeDir, { recursive: true });
    lock = await acquireLock(storeDir);
    try {
      const files = await readdir(storeDir);
      // A checkpoint's leftovers (a crash mid-write): no process writes them now, we hold the lock.
      for (const file of files.filter((f) => isWriteLeftover(f, DOC_SUFFIX))) await removeGradually(path.join(storeDir, file));
      for (const file of files.filter((f) => f.endsWith(DOC_SUFFIX))) {
        const name = file.slice(0, -DOC_SUFFIX.length);
        const adapter = new CollectionFile(path.join(storeDir, file));
        const db = new Low<CollectionDocument>(adapter, { seq: 0, entries: new Map() });
        await db.read();
        collections.set(name, ShardedMap.from(db.data.entries));
        docSeq.set(name, db.data.seq);
        docBytes.set(name, adapter.bytes);
        seq = Math.max(seq, db.data.seq);
      }
      // Applied as read: a first poll cycle's segment holds ~800 MB of ops, not to be held at once.
      const { bytes, torn } = await readWal(storeDir, (entry) => {
        apply(entry.ops, entry.seq, true);
        seq = Math.max(seq, entry.seq);
      });
      for (const { file, validBytes } of torn) {
        log.warn({ file }, 'dropping a torn last line of the WAL (never acknowledged, or in an old segment a checkpoint already covers)');
        await truncate(file, validBytes);
      }
      wal = new Wal(storeDir, options.onFsync);
      await wal.open(seq + 1);
      wal.bytes = bytes;
      log.info({ dir: storeDir, seq, walBytes: bytes, collections: Object.fromEntries([...collections].map(([k, v]) => [k, v.size])) }, 'store opened');
    } catch (error) {
      await lock.release();
      throw error instanceof BridgeError
        ? error
        : new BridgeError('store.corrupt', `cannot open the store in ${storeDir}: ${describeError(error)}`, { cause: error });
    }
  }

  async function runCheckpoint(): Promise<void> {
    if (!wal || !dir || dirty.size === 0) return;
    const atSeq = seq;
    const older = await wal.rotate(atSeq + 1);
    // What the older segments hold; commits made while the documents are written go to the new one.
    const olderBytes = wal.bytes;
    const names = [...dirty];
    dirty.clear();
    try {
      for (const name of names) {
        // The live map, written as commits go on (no copy: copying a 300,000-entry collection held
        // the event loop ~190 ms). Each key is then written with its value as of `atSeq` or later,
        // and every op after `atSeq` is in the new WAL segment, replayed over this document at
        // recovery: puts and deletes are idempotent, so the result is the latest state either way.
        const data: CollectionDocument = { seq: atSeq, entries: collection(name) };
        const adapter = new CollectionFile(path.join(dir, `${name}${DOC_SUFFIX}`));
        await new Low<CollectionDocument>(adapter, data).write();
        docSeq.set(name, atSeq);
        docBytes.set(name, adapter.bytes);
      }
      await wal.removeSegments(older);
      wal.bytes -= olderBytes;
      log.debug({ seq: atSeq, collections: names }, 'checkpoint written');
    } catch (error) {
      for (const name of names) dirty.add(name);
      log.error({ err: error }, 'checkpoint failed; the WAL is kept');
    }
  }

  /** Starts a checkpoint, or joins the one running (the store's own triggers: any checkpoint will do). */
  function startCheckpoint(): Promise<void> {
    if (checkpointing) return checkpointing;
    checkpoints += 1;
    checkpointing = runCheckpoint().finally(() => {
      checkpointing = undefined;
    });
    return checkpointing;
  }

  const store: Store = {
    name: 'store',
    dir,
    async start() {
      if (open) return;
      opening ??= (async () => {
        if (dir) await recover(dir);
        open = true;
        if (dir) {
          timer = setInterval(() => {
            if (holds === 0 && due('timer')) void startCheckpoint();
          }, options.checkpointIntervalMs ?? 5 * 60_000);
          timer.unref();
          if (due('write')) void startCheckpoint();
        }
      })().finally(() => {
        opening = undefined;
      });
      await opening;
    },
    async stop() {
      if (!open) return;
      open = false;
      clearInterval(timer);
      await checkpointing;
      await wal?.close();
      await lock?.release();
      wal = undefined;
      lock = undefined;
    },
    get: <T>(c: string, k: string) => collections.get(c)?.get(k) as T | undefined,
    has: (c, k) => collections.get(c)?.has(k) ?? false,
    entries: <T>(c: string) => (collections.get(c)?.entries() ?? [].values()) as IterableIterator<[string, T]>,
    size: (c) => collections.get(c)?.size ?? 0,
    commit(ops) {
      if (!open) return Promise.reject(new BridgeError('store.closed', 'the store is not open', { retryable: true }));
      if (wal?.failed) return Promise.reject(unavailable(wal.failed));
      if (ops.length === 0) return Promise.resolve();
      seq += 1;
      apply(ops, seq, false);
      if (!wal) return Promise.resolve();
      return wal.append({ seq, ops }).then(
        () => {
          if (holds === 0 && due('write')) void startCheckpoint();
        },
        (error: Error) => {
          log.fatal({ err: error }, 'the store cannot write; refusing further commits until restarted');
          throw unavailable(error);
        },
      );
    },
    stage(ops) {
      if (!open) throw new BridgeError('store.closed', 'the store is not open', { retryable: true });
      // Staged values reach the next checkpoint like any other: the seq they are filed under is the
      // last committed one, so a replay of later commits still applies over them.
      apply(ops, seq, false);
    },
    async durable() {
      await wal?.drain();
      if (wal?.failed) throw unavailable(wal.failed);
    },
    holdCheckpoints() {
      holds += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds === 0 && open && due('write')) void startCheckpoint();
      };
    },
    async checkpoint() {
      // One already running may have started before the caller's last commits: then another follows it.
      if (checkpointing) await checkpointing;
      await startCheckpoint();
    },
    health() {
      if (!open) return { ok: false, reason: 'store not open' };
      if (wal?.failed) return { ok: false, reason: `store cannot write: ${wal.failed.message}` };
      return { ok: true };
    },
    stats() {
      return {
        walBytes: wal?.bytes ?? 0, seq, slowestFsyncMs: Math.round(wal?.slowestSyncMs ?? 0), checkpoints,
        collections: Object.fromEntries([...collections].map(([k, v]) => [k, v.size])),
      };
    },
    async advertise(patch) {
      await lock?.update(patch);
    },
  };
  return store;
}

function unavailable(cause: Error): BridgeError {
  return new BridgeError('store.unavailable', `the store cannot write: ${cause.message}`, { retryable: true, cause });
}
