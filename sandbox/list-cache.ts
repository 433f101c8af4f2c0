import { yieldToLoop } from '../src/yielder.js';

/**
 * Serialized list bodies, cached in chunks: a 100,000-student list is rendered once, and a change
 * re-renders only the chunk holding the changed record (an insert or delete, from there on). The
 * first render streams chunk by chunk and yields to the event loop between chunks, so deliveries
 * and other requests keep going; once everything is cached the length is known up front.
 */
export interface ListBody {
  /** Known when every chunk is cached; otherwise the answer is sent chunked. */
  length: number | undefined;
  chunks: AsyncIterable<Buffer>;
}

export interface ListCache<T> {
  body(rows: readonly T[]): ListBody;
  /** The record at `index` changed. */
  invalidate(index: number): void;
  /** Records from `index` on moved (insert or delete). */
  invalidateFrom(index: number): void;
}

/** The list's envelope around its array at `path` (`['data', 'students']`: `{"data":{"students":[…]}}`). */
export function listEnvelope(path: readonly string[]): { prefix: Buffer; suffix: Buffer } {
  return { prefix: Buffer.from(`${path.map((key) => `{${JSON.stringify(key)}:`).join('')}[`), suffix: Buffer.from(`]${'}'.repeat(path.length)}`) };
}

export function createListCache<T>(path: readonly string[], render: (row: T) => unknown, chunkSize = 500): ListCache<T> {
  const { prefix, suffix } = listEnvelope(path);
  let cached: (Buffer | undefined)[] = [];
  /** Bumped when records move: a render begun before must not store its chunks. */
  let epoch = 0;

  const renderChunk = (rows: readonly T[], chunk: number): Buffer => {
    const parts: string[] = [];
    const end = Math.min(rows.length, (chunk + 1) * chunkSize);
    for (let i = chunk * chunkSize; i < end; i++) parts.push(JSON.stringify(render(rows[i] as T)));
    return Buffer.from((chunk > 0 ? ',' : '') + parts.join(','));
  };

  async function* stream(rows: readonly T[], count: number, startEpoch: number): AsyncGenerator<Buffer> {
    yield prefix;
    for (let chunk = 0; chunk < count; chunk++) {
      let buffer = startEpoch === epoch ? cached[chunk] : undefined;
      if (!buffer) {
        buffer = renderChunk(rows, chunk);
        if (startEpoch === epoch) cached[chunk] = buffer;
        await yieldToLoop();
      }
      yield buffer;
    }
    yield suffix;
  }

  return {
    body(rows) {
      // A snapshot of the order: a delete while streaming must not shift what is still to come.
      const snapshot = rows.slice();
      const count = Math.ceil(snapshot.length / chunkSize);
      cached.length = count;
      let length: number | undefined = prefix.length + suffix.length;
      for (let chunk = 0; chunk < count && length !== undefined; chunk++) {
        const buffer = cached[chunk];
        length = buffer ? length + buffer.length : undefined;
      }
      return { length, chunks: stream(snapshot, count, epoch) };
    },
    invalidate(index) {
      if (index >= 0) cached[Math.floor(index / chunkSize)] = undefined;
    },
    invalidateFrom(index) {
      epoch++;
      cached = cached.slice(0, Math.max(0, Math.floor(index / chunkSize)));
    },
  };
}
