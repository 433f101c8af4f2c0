import { ListScanner } from './list-scanner.js';

/**
 * Reads a list envelope from a body stream without holding the event loop (issue 4, large lists).
 * The scanner's work is bounded per step by slicing chunks; between steps we yield with
 * setImmediate once `budgetMs` of work has accumulated, so I/O callbacks (webhook deliveries,
 * /healthz) get served during a poll of a 200 MB list. A plain `await` would not do: a body
 * that is already buffered resolves through microtasks only and starves the loop.
 */
export interface ReadListOptions<T> {
  /** Path of the array, e.g. ['data', 'students']. */
  path: readonly string[];
  /** Validates and normalizes one element; throws a BridgeError to reject the whole list. */
  map: (value: unknown, index: number) => T;
  /** Longest stretch of synchronous work between yields (default 5 ms). */
  budgetMs?: number;
  signal?: AbortSignal;
}

/** Bytes handed to the scanner at once: ~1 ms of work, whatever size the transport's chunks are. */
const SLICE_BYTES = 256 * 1024;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function readList<T>(body: AsyncIterable<Uint8Array>, options: ReadListOptions<T>): Promise<T[]> {
  const items: T[] = [];
  const scanner = new ListScanner(options.path);
  const budget = options.budgetMs ?? 5;
  let since = performance.now();
  for await (const chunk of body) {
    for (let offset = 0; offset < chunk.length; offset += SLICE_BYTES) {
      const values = scanner.push(chunk.subarray(offset, offset + SLICE_BYTES));
      for (let i = 0; i < values.length; i++) items.push(options.map(values[i], items.length));
      if (performance.now() - since >= budget) {
        await yieldToLoop();
        options.signal?.throwIfAborted();
        since = performance.now();
      }
    }
  }
  scanner.end();
  return items;
}
