import { Worker } from 'node:worker_threads';
import { BridgeError } from '../../errors.js';
import type { SnapshotIndex } from '../../store/index.js';
import type { PolledStreamName as PolledStream } from '../../streams/index.js';
import type { PagingSigns } from './paging.js';
import type { Initial, ParseBatch, ParseEnd } from './parse.js';
import { createYielder } from '../../yielder.js';
import type { ToMain, ToWorker } from './worker-protocol.js';

/**
 * The main-thread side of the list worker (src/upstream/README.md): a worker thread that runs the
 * list pipeline (parse.ts) for the poll, so scanning, hashing, parsing, validating and serializing
 * 300,000 records run on the machine's other core instead of between webhook acknowledgements.
 *
 * The raw indexes live in the worker (worker-thread.ts). This side knows which snapshot version
 * a stream's index was read at (`indexVersion`): `setIndex` hands it one read from the store, `drop`
 * forgets it before a commit changes the snapshot, and `adopt` makes a read's own index the stream's
 * after the cycle's last commit. A worker that dies takes its indexes with it, which is safe: the
 * next cycle reads the index from the store again. Its threads start with `warm()` or on the first
 * read, and never keep the process alive (unref).
 */
export interface ParseSink {
  /**
   * One batch, in list order. A promise holds the reading back until it settles (the store takes
   * what the batch holds), so a slow store is not outrun by a fast upstream.
   */
  batch(batch: ParseBatch): void | Promise<void>;
}

export interface ListWorker {
  /**
   * Parses one list body, handing each batch to `sink` as it comes. Resolves once the body has ended
   * whole (and the sink has taken every batch) with its end and this read's id (for `adopt`); rejects
   * with the upstream.* error of a malformed or truncated body, after the sink may have seen some.
   */
  parse(stream: PolledStream, body: AsyncIterable<Uint8Array>, options: ParseOptions, sink: ParseSink): Promise<{ end: ParseEnd; id: number }>;
  /** The snapshot version of the stream's index in the worker; undefined when it has none. */
  indexVersion(stream: PolledStream): number | undefined;
  setIndex(stream: PolledStream, index: SnapshotIndex): void;
  drop(stream: PolledStream): void;
  /** Read `id`'s index becomes the stream's, at the snapshot version its cycle left. */
  adopt(stream: PolledStream, id: number, version: number): void;
  /** Starts the streams' threads now instead of at their first read (each takes ~300 ms to load its code). */
  warm(streams: readonly PolledStream[]): void;
  stop(): Promise<void>;
}

export interface ParseOptions {
  /** Skip records whose bytes the stream's committed index knows (false: parse every one). */
  useIndex: boolean;
  /** The stream's snapshot is empty: have each record's snapshot entry made in the worker (parse.ts). */
  fresh?: { initial: Initial } | undefined;
  /** What the answer's headers say of pages (headers.ts). */
  paging?: PagingSigns | undefined;
  signal?: AbortSignal;
}

/** Bytes per message to the worker, and messages not yet answered before the reader waits. */
const SLICE_BYTES = 256 * 1024;
const MAX_IN_FLIGHT = 8;
/**
 * The memory a slice is copied into goes to the worker and comes back with its batch, to be used
 * again: a fresh buffer for every slice would make the daemon's thread allocate the whole list's size
 * in external memory per cycle, and V8 answers that with full garbage collections of the whole heap.
 */
const SPARE_BYTES = 2 * SLICE_BYTES;
const MAX_SPARES = MAX_IN_FLIGHT * 2 + 2;
/** Work on the worker's batches per event-loop turn (the same budget as the cycle's other loops). */
const HANDLE_BUDGET_MS = 4;

interface Read {
  stream: PolledStream;
  sink: ParseSink;
  /** Messages received and not handled yet (see onMessage). */
  pending: ToMain[];
  /** The sink is taking a batch: the next message waits. */
  taking: boolean;
  inFlight: number;
  wake: (() => void) | undefined;
  error: Error | undefined;
  resolve: (end: ParseEnd) => void;
  reject: (error: Error) => void;
}

/**
 * The parts of a slice copied into memory of our own, to be transferred: a chunk from the HTTP
 * client may share its memory with others. `spare`: memory back from the worker, used again.
 */
function join(parts: readonly Uint8Array[], size: number, spare: ArrayBuffer | undefined): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(spare ?? new ArrayBuffer(Math.max(size, SPARE_BYTES)), 0, size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}

export function createListWorker(): ListWorker {
  // One thread per stream: both lists are read at once, and each stream's index stays in its thread.
  const threads = new Map<PolledStream, Worker>();
  let nextId = 1;
  const reads = new Map<number, Read>();
  const spares: ArrayBuffer[] = [];
  const versions = new Map<PolledStream, number>();

  const post = (stream: PolledStream, message: ToWorker, transfer?: ArrayBuffer[]) => threads.get(stream)?.postMessage(message, transfer);

  function failRead(read: Read, error: Error): void {
    read.error ??= error;
    read.reject(read.error);
    read.wake?.();
  }

  /**
   * Messages are queued here and handled a few milliseconds' worth at a time. Node delivers every
   * message waiting on a port in ONE task: when the daemon's thread fell behind (a garbage
   * collection), the batches piled up in the meantime (up to 8 per stream) were diffed in one go,
   * and bench:poll saw event-loop stalls of 50-120 ms on a first emit cycle.
   */
  function onMessage(message: ToMain): void {
    if (message.t === 'batch' && message.spent && spares.length < MAX_SPARES) spares.push(message.spent);
    const read = reads.get(message.id);
    if (!read || read.error) return;
    read.pending.push(message);
    handleSoon();
  }

  let handling = false;
  function handleSoon(): void {
    if (handling) return;
    handling = true;
    setImmediate(handlePending);
  }

  function handlePending(): void {
    handling = false;
    const until = performance.now() + HANDLE_BUDGET_MS;
    for (;;) {
      const read = [...reads.values()].find((r) => r.pending.length > 0 && !r.error && !r.taking);
      if (!read) return;
      handle(read, read.pending.shift() as ToMain);
      if (performance.now() >= until) return handleSoon();
    }
  }

  function handle(read: Read, message: ToMain): void {
    if (read.error) return;
    if (message.t === 'batch') {
      const taken = () => {
        read.taking = false;
        read.inFlight -= 1;
        read.wake?.();
        if (read.pending.length > 0) handleSoon();
      };
      let taking: void | Promise<void>;
      try {
        taking = read.sink.batch(message);
      } catch (error) {
        failRead(read, error as Error);
        return;
      }
      if (!taking) return taken();
      read.taking = true;
      taking.then(taken, (error: unknown) => {
        read.taking = false;
        failRead(read, error as Error);
      });
    } else if (message.t === 'done') {
      read.resolve(message.end);
    } else {
      const { code, message: text, retryable, context } = message.error;
      failRead(read, new BridgeError(code, text, { retryable, ...(context ? { context } : {}) }));
    }
  }

  function spawn(stream: PolledStream): Worker {
    const spawned = new Worker(new URL('./worker-boot.mjs', import.meta.url), { workerData: { name: `list:${stream}` } });
    spawned.unref();
    const lost = (error: Error) => {
      if (threads.get(stream) !== spawned) return;
      threads.delete(stream);
      const failure = new BridgeError('poll.list_worker', `the list worker stopped: ${error.message}`, { retryable: true, cause: error });
      versions.delete(stream);
      for (const read of reads.values()) if (read.stream === stream) failRead(read, failure);
    };
    spawned.on('message', onMessage);
    spawned.on('error', lost);
    spawned.on('exit', (code) => lost(new Error(`exit code ${code}`)));
    return spawned;
  }

  function ensureThread(stream: PolledStream): void {
    if (!threads.has(stream)) threads.set(stream, spawn(stream));
  }

  async function parse(stream: PolledStream, body: AsyncIterable<Uint8Array>, options: ParseOptions, sink: ParseSink) {
    ensureThread(stream);
    const id = nextId++;
    let read!: Read;
    const done = new Promise<ParseEnd>((resolve, reject) => {
      read = { stream, sink, pending: [], taking: false, inFlight: 0, wake: undefined, error: undefined, resolve, reject };
    });
    done.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
    reads.set(id, read);
    post(stream, { t: 'begin', id, stream, useIndex: options.useIndex, ...(options.fresh ? { fresh: options.fresh } : {}), ...(options.paging ? { paging: options.paging } : {}) });
    try {
      let parts: Uint8Array[] = [];
      let size = 0;
      const yielder = createYielder(HANDLE_BUDGET_MS);
      const flush = async () => {
        const bytes = join(parts, size, size <= SPARE_BYTES ? spares.pop() : undefined);
        parts = [];
        size = 0;
        read.inFlight += 1;
        post(stream, { t: 'chunk', id, bytes }, [bytes.buffer]);
        while (read.inFlight >= MAX_IN_FLIGHT && !read.error) await new Promise<void>((resolve) => (read.wake = resolve));
        read.wake = undefined;
        // The body's iteration goes on in microtasks while bytes are buffered: a burst (a read's
        // start, the end of a wait) would otherwise be read, copied and posted in one go while
        // webhooks' requests wait. So the loop gives the event loop a turn every few milliseconds.
        if (yielder.due()) await yielder.pause(options.signal);
      };
      for await (const chunk of body) {
        if (read.error) break;
        options.signal?.throwIfAborted();
        parts.push(chunk);
        size += chunk.length;
        if (size >= SLICE_BYTES) await flush();
      }
      if (read.error) throw read.error;
      if (size > 0) await flush();
      post(stream, { t: 'end', id, stream });
      return { end: await done, id };
    } catch (error) {
      post(stream, { t: 'abort', id });
      throw read.error ?? error;
    } finally {
      reads.delete(id);
    }
  }

  return {
    parse,
    indexVersion: (stream) => versions.get(stream),
    setIndex(stream, index) {
      ensureThread(stream);
      post(stream, { t: 'index', stream, keys: index.keys, hashes: index.hashes });
      versions.set(stream, index.version);
    },
    drop(stream) {
      versions.delete(stream);
      post(stream, { t: 'drop', stream });
    },
    adopt(stream, id, version) {
      post(stream, { t: 'adopt', stream, id });
      if (threads.has(stream)) versions.set(stream, version);
    },
    warm: (streams) => streams.forEach(ensureThread),
    async stop() {
      const stopping = [...threads.values()];
      threads.clear();
      versions.clear();
      for (const read of reads.values()) failRead(read, new BridgeError('poll.stopped', 'the list worker is stopping', { retryable: false }));
      await Promise.all(stopping.map((thread) => thread.terminate()));
    },
  };
}
