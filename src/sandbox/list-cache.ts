/**
 * Serialized list bodies, cached in chunks so a 100,000-student list is rendered once and a change
 * re-renders only the chunk holding the changed record (an insert or delete re-renders from there on).
 * The body is a list of Buffers to stream: `{"data":{"<key>":[` chunk… `]}}`.
 */
export interface ListCache<T> {
  body(rows: readonly T[]): Buffer[];
  /** The record at `index` changed. */
  invalidate(index: number): void;
  /** Records from `index` on moved (insert or delete). */
  invalidateFrom(index: number): void;
  clear(): void;
}

export function createListCache<T>(key: string, render: (row: T) => unknown, chunkSize = 500): ListCache<T> {
  const prefix = Buffer.from(`{"data":{"${key}":[`);
  const suffix = Buffer.from(']}}');
  let chunks: (Buffer | undefined)[] = [];

  const renderChunk = (rows: readonly T[], chunk: number): Buffer => {
    const parts: string[] = [];
    const end = Math.min(rows.length, (chunk + 1) * chunkSize);
    for (let i = chunk * chunkSize; i < end; i++) parts.push(JSON.stringify(render(rows[i] as T)));
    return Buffer.from((chunk > 0 ? ',' : '') + parts.join(','));
  };

  return {
    body(rows) {
      const count = Math.ceil(rows.length / chunkSize);
      chunks.length = count;
      const out: Buffer[] = [prefix];
      for (let chunk = 0; chunk < count; chunk++) {
        let buffer = chunks[chunk];
        if (!buffer) {
          buffer = renderChunk(rows, chunk);
          chunks[chunk] = buffer;
        }
        out.push(buffer);
      }
      out.push(suffix);
      return out;
    },
    invalidate(index) {
      if (index >= 0) chunks[Math.floor(index / chunkSize)] = undefined;
    },
    invalidateFrom(index) {
      chunks = chunks.slice(0, Math.max(0, Math.floor(index / chunkSize)));
    },
    clear() {
      chunks = [];
    },
  };
}
