import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { isBridgeError } from '../../errors.js';
import { startHeapReports } from '../../thread-heap.js';
import type { Key } from '../../streams/index.js';
import { ListParse, type RawIndex } from './parse.js';
import type { ToMain, ToWorker } from './worker-protocol.js';

/**
 * The list worker thread (worker.ts is its main-thread side). It holds the raw indexes, so
 * they never cross threads: per stream the `committed` one (what scans use) and the `candidate`
 * built by the last whole read, which becomes committed only when the main thread says its cycle
 * committed (`adopt` with that read's id). Anything else leaves no index: the next read parses all.
 */
const port = parentPort;
if (!port) throw new Error('worker-thread.ts runs only as a worker thread');

lowerPriority();
startHeapReports((workerData as { name?: string } | undefined)?.name ?? 'list');

const sessions = new Map<number, ListParse>();
const committed = new Map<string, RawIndex>();
const candidates = new Map<string, { id: number; index: RawIndex }>();

/** The raw index of a SnapshotIndex's packed keys and hashes (a hash per line, in key order). */
function indexOf(packed: Float64Array | string[], hashes: string): RawIndex {
  const keys: Key[] = packed instanceof Float64Array ? Array.from(packed) : packed;
  const byHash = new Map<string, Key>();
  let start = 0;
  for (const key of keys) {
    const end = hashes.indexOf('\n', start);
    if (end < 0) throw new Error(`the index has ${keys.length} keys and fewer hashes`);
    if (end > start) byHash.set(hashes.slice(start, end), key);
    start = end + 1;
  }
  return { byHash, keys };
}

const send = (message: ToMain) => {
  const transfer: ArrayBuffer[] = [];
  if (message.t === 'batch') {
    if (message.fresh) transfer.push(message.fresh.bytes.buffer as ArrayBuffer);
    if (message.spent) transfer.push(message.spent);
  }
  port.postMessage(message, transfer);
};

function fail(id: number, error: unknown): void {
  sessions.delete(id);
  const err = isBridgeError(error)
    ? { code: error.code, message: error.message, retryable: error.retryable, ...(error.context ? { context: error.context } : {}) }
    : { code: 'poll.list_worker', message: error instanceof Error ? error.message : String(error), retryable: false };
  send({ t: 'error', id, error: err });
}

port.on('message', (message: ToWorker) => {
  switch (message.t) {
    case 'index':
      committed.set(message.stream, indexOf(message.keys, message.hashes));
      return;
    case 'begin':
      sessions.set(message.id, new ListParse(message.stream, { index: message.useIndex ? committed.get(message.stream) : undefined, fresh: message.fresh, paging: message.paging }));
      return;
    case 'chunk': {
      const session = sessions.get(message.id);
      if (!session) return; // failed or aborted already: its error was sent
      try {
        const batch = session.push(message.bytes);
        // The scanner keeps no view of the chunk past push (scanner.ts copies a split value).
        send({ t: 'batch', id: message.id, ...batch, spent: message.bytes.buffer as ArrayBuffer });
      } catch (error) {
        fail(message.id, error);
      }
      return;
    }
    case 'end': {
      const session = sessions.get(message.id);
      if (!session) return;
      try {
        const end = session.end();
        candidates.set(message.stream, { id: message.id, index: session.index() });
        send({ t: 'done', id: message.id, end });
      } catch (error) {
        fail(message.id, error);
      }
      sessions.delete(message.id);
      return;
    }
    case 'abort':
      sessions.delete(message.id);
      return;
    case 'drop':
      committed.delete(message.stream);
      return;
    case 'adopt': {
      const candidate = candidates.get(message.stream);
      candidates.delete(message.stream);
      if (candidate?.id === message.id) committed.set(message.stream, candidate.index);
      else committed.delete(message.stream);
      return;
    }
  }
});

/**
 * A poll is background work; webhook acknowledgements on the daemon's thread are not. With both
 * lists parsed at once a machine of two cores is full, so this thread yields the CPU first: nice 10
 * for this thread alone (Linux names it /proc/thread-self → <pid>/task/<tid>). Best effort: elsewhere,
 * or where it is not allowed, it runs at normal priority.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // not Linux, or no /proc: normal priority
  }
}
