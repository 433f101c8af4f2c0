import { BridgeError } from '../../errors.js';
import type { PolledStreamName, StreamRecord } from '../../streams/index.js';
import { createYielder } from '../../yielder.js';
import type { PagingSigns } from './paging.js';
import { ListParse } from './parse.js';

/**
 * A whole list read in-process into its records through the one list pipeline (parse.ts): the
 * client's `list`, for tools and tests. The poll never holds a list whole: it streams the body
 * through the list worker (worker.ts) instead. Between slices of the body the event loop gets a
 * turn once `budgetMs` of work has gathered, so a server beside it keeps answering.
 */
export interface ReadListOptions {
  /** Longest stretch of synchronous work between yields (default 5 ms). */
  budgetMs?: number;
  signal?: AbortSignal | undefined;
  /** What the answer's headers say of pages (headers.ts). */
  paging?: PagingSigns | undefined;
}

/** Bytes handed to the parser at once: ~1 ms of work, whatever size the transport's chunks are. */
const SLICE_BYTES = 256 * 1024;

export async function readList<S extends PolledStreamName>(stream: S, body: AsyncIterable<Uint8Array>, options: ReadListOptions = {}): Promise<StreamRecord<S>[]> {
  const parse = new ListParse(stream, { paging: options.paging });
  const records: StreamRecord<S>[] = [];
  const yielder = createYielder(options.budgetMs ?? 5);
  for await (const chunk of body) {
    for (let offset = 0; offset < chunk.length; offset += SLICE_BYTES) {
      const batch = parse.push(chunk.subarray(offset, offset + SLICE_BYTES));
      for (const text of batch.texts) records.push(JSON.parse(text) as StreamRecord<S>);
      if (yielder.due()) await yielder.pause(options.signal);
    }
  }
  const end = parse.end();
  if (end.duplicate !== undefined) {
    throw new BridgeError('upstream.invalid_response', `the ${stream} list holds the key ${String(end.duplicate)} twice`, { retryable: false });
  }
  return records;
}
