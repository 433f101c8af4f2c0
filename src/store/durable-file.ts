import { link, open, rename, unlink, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Adapter } from 'lowdb';
import { readLines } from './file-lines.js';
import { knownValueJson } from '../record-json.js';

/**
 * Characters of a document serialized per write. Serializing is synchronous work on the event loop,
 * one chunk per task, and every webhook acknowledgement waits behind the task running. Checkpoint of
 * 100,000 entries of 1.1 KB (110 MB), same time either way (1.06-1.09 s): event-loop delay max
 * 7.0-7.7 ms with 1 MiB chunks, 4.2-5.0 ms with these.
 */
const WRITE_CHUNK_CHARS = 256 * 1024;
/** Bytes of a document written between two fsyncs (see writeFileAtomic). */
const SYNC_EVERY_BYTES = 4 * 1024 * 1024;
/** How much of a file removeGradually frees at a time, and its pause after each step. */
const REMOVE_STEP_BYTES = 16 * 1024 * 1024;
const REMOVE_PAUSE_MS = 10;
/** The names writeFileAtomic writes beside `file`: its temp file, and the old content's second name (keepOld). */
const tempName = (file: string) => `${file}.${process.pid}.tmp`;
const oldName = (file: string) => `${file}.old`;

/**
 * Whether `name` is one of those names for a file whose name ends in `suffix`, left by a crash in
 * the middle of a write (any process's temp file: only the holder of the store writes there).
 */
export function isWriteLeftover(name: string, suffix: string): boolean {
  const temp = /^(.*)\.\d+\.tmp$/.exec(name);
  return temp ? (temp[1] as string).endsWith(suffix) : name.endsWith(oldName(suffix));
}

/**
 * Writes `file` so that a crash at any instant leaves either the old or the new content, whole:
 * write a temp file, fsync it, rename it over, fsync the directory (so the rename itself is durable).
 * `chunks` is consumed piece by piece, so a large document is written without one huge string.
 * With `keepOld` (the store's documents, hundreds of MB) the old content keeps a second name
 * (`<file>.old`, a hard link) through the rename, so the rename frees nothing; it is freed afterwards
 * in steps (removeGradually). The store removes a leftover `.old` or temp file (a crash in between)
 * when it opens.
 */
export async function writeFileAtomic(file: string, chunks: AsyncIterable<string> | Iterable<string>, options: { keepOld?: boolean } = {}): Promise<number> {
  const temp = tempName(file);
  const handle = await open(temp, 'w');
  let bytes = 0;
  let unsynced = 0;
  try {
    let buffer = '';
    for await (const chunk of chunks) {
      buffer += chunk;
      if (buffer.length >= WRITE_CHUNK_CHARS) {
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
  const old = options.keepOld ? await keepOldName(file) : undefined;
  await rename(temp, file);
  await syncDir(path.dirname(file));
  if (old) await removeGradually(old);
  return bytes;
}

/** Hard-links `file` to `<file>.old`; returns that name, or undefined if there is no file (or no hard links here). */
async function keepOldName(file: string): Promise<string | undefined> {
  const old = oldName(file);
  await removeGradually(old); // a crash's leftover
  try {
    await link(file, old);
    return old;
  } catch {
    return undefined; // no old file, or a filesystem without hard links: the rename frees it at once
  }
}

/**
 * Unlinks a file after cutting it down in steps. Freeing a big file's blocks is filesystem metadata
 * work that every fsync then waits behind: unlinking the 400 MB WAL segment of a first poll cycle at
 * once made WAL fsyncs take up to 146 ms, and webhook acknowledgements up to 196 ms (bench:poll).
 * Steps of REMOVE_STEP_BYTES with a pause between them let the acknowledgements' fsyncs through: the
 * same checkpoint then saw a p99 of 24 ms. Only a file's last name is cut down: truncating a file that
 * has another name (a crash between keepOldName's link and the rename leaves `.old` naming the live
 * document) would empty that one too, so such a name is only unlinked. Best effort: a file that is
 * gone already is fine, and one left behind is removed by a later call.
 */
export async function removeGradually(file: string): Promise<void> {
  try {
    const handle = await open(file, 'r+');
    try {
      const stats = await handle.stat();
      for (let size = stats.nlink === 1 ? stats.size : 0; size > REMOVE_STEP_BYTES; ) {
        size -= REMOVE_STEP_BYTES;
        await handle.truncate(size);
        await sleep(REMOVE_PAUSE_MS);
      }
    } finally {
      await handle.close();
    }
    await unlink(file);
  } catch {
    // not there (the usual case for a leftover), or not removable now: a later call tries again
  }
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
  /** Read as a Map; written from any (the store's are ShardedMaps). */
  entries: Iterable<[string, unknown]>;
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
    try {
      return await this.readLines();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /**
   * One entry per line, as `serialize` writes them, parsed line by line: a snapshot document of a few
   * hundred thousand records can outgrow the longest string V8 makes (~512 MiB), so it is never read
   * as one (see readLines). A document not laid out that way is read whole, as before.
   */
  private async readLines(): Promise<CollectionDocument> {
    let seq: number | undefined;
    const entries = new Map<string, unknown>();
    let closed = false;
    let laidOut = true;
    const bytes = await readLines(this.file, (bytesOfLine, { number }) => {
      if (!laidOut) return;
      const line = bytesOfLine.toString('utf8');
      if (number === 1) {
        const head = DOCUMENT_HEAD.exec(line);
        if (head) seq = Number(head[1]);
        else laidOut = false;
      } else if (closed) {
        if (line !== '') throw new Error(`${this.file}: line ${number}: text after the end of the document`);
      } else if (line === DOCUMENT_TAIL) {
        closed = true;
      } else {
        const key = ENTRY_KEY.exec(line);
        if (!key) throw new Error(`${this.file}: line ${number} is not a document entry`);
        const end = line.endsWith(',') ? line.length - 1 : line.length;
        entries.set(JSON.parse(key[1] as string) as string, JSON.parse(line.slice(key[0].length, end)));
      }
    });
    this.bytes = bytes;
    if (!laidOut) return parseWhole(await readFile(this.file, 'utf8'));
    if (seq === undefined || !closed) throw new Error(`${this.file}: the document is incomplete`);
    return { seq, entries };
  }

  async write(data: CollectionDocument): Promise<void> {
    this.bytes = await writeFileAtomic(this.file, serialize(data), { keepOld: true });
  }
}

/** The lines that open and close a document (serialize), and the key that starts each entry line. */
const DOCUMENT_HEAD = /^\{"seq":(\d+),"entries":\{$/;
const DOCUMENT_TAIL = '}}';
const ENTRY_KEY = /^("(?:[^"\\]|\\.)*"):/;

function parseWhole(text: string): CollectionDocument {
  const parsed = JSON.parse(text) as { seq: number; entries: Record<string, unknown> };
  return { seq: parsed.seq, entries: new Map(Object.entries(parsed.entries)) };
}

async function* serialize(data: CollectionDocument): AsyncGenerator<string> {
  yield `{"seq":${data.seq},"entries":{`;
  let first = true;
  let sliceStart = performance.now();
  for (const [key, value] of data.entries) {
    // A record that has its JSON text without serializing gives it (record-json.ts): the same content.
    yield `${first ? '' : ','}\n${JSON.stringify(key)}:${knownValueJson(value) ?? JSON.stringify(value)}`;
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
