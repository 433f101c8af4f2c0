import { open, stat, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { StoredRecord } from '../../src/connectors/stored-record.js';
import { syncDir, truncateDurably } from '../../src/files/durable.js';
import { readLines } from '../../src/files/lines.js';
import { makeDir } from '../../src/files/make-dir.js';

/** Lines are written with `id` first, so reading it back needs no full parse. */
const LEADING_ID = /^\{"id":("(?:[^"\\]|\\.)*")/;

/**
 * One `<stream>.jsonl` file, appended to at most once per record id, even across restarts: the ids
 * already in the file are read back at first use, and every append is fsync'd before it counts.
 * Appends are serialized (the outbox may run several batches of one connector at once).
 *
 * An append that fails is cut off the file again before anything else is read or added: its lines
 * may be in the page cache, where reading the file back would find them, and yet never reach the
 * disk (Linux may mark the pages of a failed write clean without writing them). So its records are
 * appended again rather than taken for written.
 *
 * The open handle writes to a file, not to a path: a file deleted (its directory with it) or moved
 * away while the daemon runs would take every later line with it, each counted as delivered. So
 * before and after each append the path must still name the handle's file; when it does not, the
 * file at the path (made anew, directory too, when there is none) is read and written from then on,
 * and an append that went to the file gone is a failure, written again to the new one.
 */
export class JsonlFile {
  private ids: Set<string> | undefined;
  private handle: FileHandle | undefined;
  /** Which file the handle writes (device and inode), to tell whether the path still names it. */
  private opened: { dev: number; ino: number } | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  /** Bytes of the file known to be on disk: what it held when read back, and each append synced since. */
  private durable = 0;
  /** An append failed and the file still has to be cut back to `durable`. */
  private cutBack = false;

  constructor(readonly file: string) {}

  /** Appends the records whose id is not in the file yet; resolves with how many, once they are durable. */
  append(records: readonly StoredRecord[]): Promise<number> {
    const run = this.tail.then(() => this.appendNow(records));
    this.tail = run.catch(() => {});
    return run;
  }

  /** Closes the file once the appends before have ended; a later append opens it again. */
  close(): Promise<void> {
    const run = this.tail.then(async () => {
      const handle = this.handle;
      this.handle = undefined;
      this.opened = undefined;
      await handle?.close();
    });
    this.tail = run.catch(() => {});
    return run;
  }

  private async appendNow(records: readonly StoredRecord[]): Promise<number> {
    if (this.cutBack) await this.cutBackNow();
    if (this.handle && !(await this.atPath())) await this.forget();
    const existed = this.ids !== undefined || (await this.load());
    const ids = this.ids!;
    const fresh = new Map<string, StoredRecord>();
    for (const record of records) if (!ids.has(record.id) && !fresh.has(record.id)) fresh.set(record.id, record);
    if (fresh.size === 0) return 0;
    const text = linesOf([...fresh.values()]);
    try {
      // The handle stays open between appends: opening and closing per batch cost more than the write.
      this.handle ??= await this.openFile();
      await this.handle.writeFile(text);
      await this.handle.sync();
      if (!existed) await syncDir(path.dirname(this.file));
    } catch (error) {
      // Part of the text may be in the file: cut it off, and read the file again next time.
      this.ids = undefined;
      this.cutBack = true;
      await this.handle?.close().catch(() => {});
      this.handle = undefined;
      await this.cutBackNow().catch(() => {});
      throw error;
    }
    if (!(await this.atPath())) {
      // Gone (or replaced) while written: these lines are in a file nobody reads. Nothing to cut back.
      await this.forget();
      throw new Error(`${this.file} was deleted or moved away while it was written; its lines go to a new file at that path`);
    }
    this.durable += typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    for (const id of fresh.keys()) ids.add(id);
    return fresh.size;
  }

  /** Opens the file to append, making its directory again when it was removed. */
  private async openFile(): Promise<FileHandle> {
    const handle = await open(this.file, 'a').catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await makeDir(path.dirname(this.file));
      return open(this.file, 'a');
    });
    try {
      const { dev, ino } = await handle.stat();
      this.opened = { dev, ino };
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
    return handle;
  }

  /** Whether the path still names the file the handle writes. */
  private async atPath(): Promise<boolean> {
    const now = await stat(this.file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw error;
    });
    return now !== undefined && now.dev === this.opened?.dev && now.ino === this.opened.ino;
  }

  /** Lets go of the handle and of what was read from its file: the file at the path is read anew. */
  private async forget(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.opened = undefined;
    this.ids = undefined;
    await handle?.close().catch(() => {});
  }

  /** Cuts the file back to the bytes known to be on disk, durably; throws (and stays due) if it cannot. */
  private async cutBackNow(): Promise<void> {
    try {
      await truncateDurably(this.file, this.durable);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.cutBack = false;
  }

  /** Reads the ids in the file; cuts a torn last line (a crash mid-append, never reported done). Returns whether the file existed. */
  private async load(): Promise<boolean> {
    const ids = new Set<string>();
    let torn: number | undefined;
    try {
      await readLines(this.file, (line, { start, terminated }) => {
        if (!terminated) torn = start;
        else if (line.length > 0) {
          const id = readId(line.toString('utf8'));
          if (id !== undefined) ids.add(id);
        }
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.ids = ids;
      this.durable = 0;
      return false;
    }
    if (torn !== undefined) await truncate(this.file, torn);
    this.durable = torn ?? (await stat(this.file)).size;
    this.ids = ids;
    return true;
  }
}

const ID_FIRST = Buffer.from('{"id":');
const NEWLINE = Buffer.from('\n');

/**
 * The records as JSON lines, `id` first: each its stored JSON, which every producer writes `id`
 * first. Records held as bytes are written as they are; the rest are joined as text.
 */
function linesOf(records: readonly StoredRecord[]): string | Buffer {
  if (!records.some((r) => r.hasBytes)) {
    let text = '';
    for (const record of records) text += `${lineOf(record)}\n`;
    return text;
  }
  const parts: Uint8Array[] = [];
  for (const record of records) {
    const bytes = record.hasBytes ? record.bytes : undefined;
    parts.push(bytes && ID_FIRST.equals(bytes.subarray(0, ID_FIRST.length)) ? bytes : Buffer.from(lineOf(record)), NEWLINE);
  }
  return Buffer.concat(parts);
}

function lineOf(record: StoredRecord): string {
  return record.json.startsWith('{"id":') ? record.json : JSON.stringify(Object.assign({ id: record.id }, record.record));
}

export function readId(line: string): string | undefined {
  const leading = LEADING_ID.exec(line);
  if (leading) return JSON.parse(leading[1]!) as string;
  try {
    const parsed = JSON.parse(line) as { id?: unknown };
    return typeof parsed?.id === 'string' ? parsed.id : undefined;
  } catch {
    return undefined;
  }
}
