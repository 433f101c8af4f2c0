import { createYielder } from '../yielder.js';
import { ListScanner } from './list-scanner.js';

/**
 * Reads a list envelope from a body stream without holding the event loop. The scanner's work is
 * bounded per step by slicing chunks; between steps it gives the loop a turn once `budgetMs` of work
 * has accumulated, so webhook deliveries and /healthz are served while a large list is read.
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

export async function readList<T>(body: AsyncIterable<Uint8Array>, options: ReadListOptions<T>): Promise<T[]> {
  const items: T[] = [];
  const scanner = new ListScanner(options.path);
  const yielder = createYielder(options.budgetMs ?? 5);
  for await (const chunk of body) {
    for (let offset = 0; offset < chunk.length; offset += SLICE_BYTES) {
      const values = scanner.push(chunk.subarray(offset, offset + SLICE_BYTES));
      for (let i = 0; i < values.length; i++) items.push(options.map(values[i], items.length));
      if (yielder.due()) await yielder.pause(options.signal);
    }
  }
  scanner.end();
  return items;
}
