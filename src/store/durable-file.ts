import { open, rename, unlink, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';

/** Bytes of a document written between two fsyncs (see writeFileAtomic). */
const SYNC_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * Writes `file` so that a crash at any instant leaves either the old or the new content, whole:
 * write a temp file, fsync it, rename it over, fsync the directory (so the rename itself is durable).
 * `chunks` is consumed piece by piece, so a large document is written without one huge string.
 */
export async function writeFileAtomic(file: string, chunks: AsyncIterable<string> | Iterable<string>): Promise<number> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w');
  let bytes = 0;
  let unsynced = 0;
  try {
    let buffer = '';
    for await (const chunk of chunks) {
      buffer += chunk;
      if (buffer.length >= 1 << 20) {
        const written = (await handle.write(buffer)).bytesWritten;
        bytes += written;
        unsynced += written;
        buffer = '';
        // Flushed as it goes: a 400 MB document left to one fsync at the end makes every WAL fsync
        // behind it (a webhook's acknowledgement) wait for the whole of it to reach the disk.
        if (unsynced >= SYNC_EVERY_BYTES) {
          await handle.datasync();
          unsynced = 0;
        }
      }
    }
    if (buffer) bytes += (await handle.write(buffer)).bytesWritten;
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(temp, file);
  await syncDir(path.dirname(file));
  return bytes;
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A checkpoint document: the state of one collection as of WAL sequence `seq`. */
export interface CollectionDocument {
  seq: number;
  entries: Map<string, unknown>;
}

/**
 * lowdb adapter for a collection document (lowdb's two-method port). Serialization yields to the
 * event loop between slices, so checkpointing a 300,000-record snapshot does not stall webhook
 * acknowledgements. The map may change while it is written (the store passes its live map, see
 * runCheckpoint): a key deleted and added again meanwhile can appear twice, and reading keeps the
 * later one, as JSON.parse does.
 */
export class CollectionFile implements Adapter<CollectionDocument> {
  /** Size of the document last read or written, in bytes (the store's checkpoint trigger uses it). */
  bytes = 0;

  constructor(readonly file: string) {}

  async read(): Promise<CollectionDocument | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    this.bytes = Buffer.byteLength(text);
    const parsed = JSON.parse(text) as { seq: number; entries: Record<string, unknown> };
    return { seq: parsed.seq, entries: new Map(Object.entries(parsed.entries)) };
  }

  async write(data: CollectionDocument): Promise<void> {
    this.bytes = await writeFileAtomic(this.file, serialize(data));
  }
}

async function* serialize(data: CollectionDocument): AsyncGenerator<string> {
  yield `{"seq":${data.seq},"entries":{`;
  let first = true;
  let sliceStart = performance.now();
  for (const [key, value] of data.entries) {
    yield `${first ? '' : ','}\n${JSON.stringify(key)}:${JSON.stringify(value)}`;
    first = false;
    // 2 ms slices: a webhook arriving mid-checkpoint waits at most one slice (8 ms slices showed in
    // bench:ingest runs long enough to checkpoint, as a p99 of 26-30 ms instead of 24).
    if (performance.now() - sliceStart > 2) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  yield '\n}}\n';
}
