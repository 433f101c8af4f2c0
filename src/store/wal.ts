import { writeSync } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { removeGradually, syncDir } from './durable-file.js';
import { readLines } from './file-lines.js';

/**
 * A put may carry `json`, the JSON text of `v` made by the caller (it often has it already, e.g. a
 * record it just serialized): the WAL writes it verbatim instead of serializing `v` again, which for
 * a 100k-record poll is most of the commit cost. It must be exactly what JSON.stringify(v) would give
 * (same content); a replay reads `JSON.parse(json)` back, as it would have without it.
 * `raw` goes further, for a string `v` holding neither a newline nor a zero byte (rawSafe): its
 * UTF-8 bytes, made by the caller (the poll's list worker, on a first cycle), written as they are
 * after the line's ops, their length in the op as `r` (rawPutHeader). A snapshot entry is mostly a
 * record's JSON text, full of quotes: escaping it into a JSON string was a third of a list worker's
 * time on a first cycle, and encoding it on the daemon's thread was the commit's biggest cost.
 * `rawJson` is the same for any value, as JSON: the UTF-8 bytes of a text reading back to `v`
 * (JSON.parse), in parts holding neither a newline nor a zero byte, written raw after the line's
 * ops, their length in the op as `j`. A first
 * cycle's created change is its record's bytes, as the list worker sent them, between a head and a
 * tail (poll/created-change.ts): nothing of 300,000 records is serialized or encoded on the daemon's thread.
 */
export type Op =
  | { op: 'put'; c: string; k: string; v: unknown; json?: string; raw?: Uint8Array; rawJson?: Uint8Array[] }
  | { op: 'del'; c: string; k: string };

/**
 * A line holding raw values is `{"s":…,"o":[…]}`, a tab, the raw values one after the other, and
 * its newline. JSON text never holds a raw tab, so the first tab ends the ops; a raw value may hold
 * tabs, but no newline (lines are split on it) and no zero byte (a segment's data ends at one).
 */
const RAW_SEPARATOR = 0x09;

/** Whether a string can be a raw value (Op.raw). */
export function rawSafe(text: string): boolean {
  return !text.includes('\n') && !text.includes('\0');
}

/** The op of a put whose value is the next `bytes` bytes of its line's raw values. */
export function rawPutHeader(c: string, k: string, bytes: number): string {
  return `{"op":"put","c":${JSON.stringify(c)},"k":${JSON.stringify(k)},"r":${bytes}}`;
}

export interface WalEntry {
  seq: number;
  ops: Op[];
}

const SEGMENT = /^wal-(\d{12})\.log$/;
/**
 * Preallocation. An fdatasync after an append must also commit the file's new size, i.e. wait for
 * the filesystem's journal, which the `file` connector's and the checkpoints' fsyncs keep busy: on
 * this project's 2-core VM that made 1 in 1,000 WAL syncs take 4-17 ms instead of 0.4 ms. Overwriting
 * bytes that already exist needs no journal (max 0.9 ms in the same test). So the segment is filled
 * with zeros ahead of the writes, PREALLOCATE_BYTES at a time, in the background, in pieces synced
 * one by one (see extend); readers stop at the first zero byte, which JSON text never holds.
 */
const PREALLOCATE_BYTES = 16 * 1024 * 1024;
/** Bytes right after the write position left to the writes when an extension starts (see extend). */
const HEADROOM_BYTES = 1024 * 1024;
/** One piece of a zero-fill, written and synced at a time (see extend). */
const ZEROS = Buffer.alloc(256 * 1024);
/** Largest group-commit batch written with writeSync on the event loop (see flushLoop). */
const SYNC_WRITE_BYTES = 256 * 1024;
const segmentName = (firstSeq: number) => `wal-${String(firstSeq).padStart(12, '0')}.log`;

/**
 * The write-ahead log: one JSON line per commit, appended to the current segment. Group commit:
 * commits that arrive while an fsync is running are written and fsync'd together by the next one,
 * so a burst of 50 webhooks costs a few fsyncs, not 50. `append` resolves once its line is durable.
 */
export class Wal {
  private handle: FileHandle | undefined;
  private segmentFirstSeq = 0;
  private queue: { line: string | Buffer; resolve: () => void; reject: (error: Error) => void }[] = [];
  private flushing: Promise<void> | undefined;
  private rotateTo: number | undefined;
  private failure: Error | undefined;
  /** Where the next line goes in the current segment. */
  private position = 0;
  /** The current segment is zero-filled (and synced) up to here. */
  private allocated = 0;
  /** A running extension and the range it fills: writes into the range wait for it. */
  private extending: Promise<void> | undefined;
  private reservedFrom = Infinity;
  /** Set by a write that reached the range being filled: the extension stops after its current piece. */
  private stopExtending = false;
  bytes = 0;
  /** The longest fsync so far (ms, wall time): a slow disk shows here before anywhere else. */
  slowestSyncMs = 0;

  /** `onSync`: told each fsync's wall time in ms (the store's fsync metric). */
  constructor(private readonly dir: string, private readonly onSync?: (ms: number) => void) {}

  async open(nextSeq: number): Promise<void> {
    await this.openSegment(nextSeq);
  }

  append(entry: WalEntry): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const line = walLine(entry);
    const done = new Promise<void>((resolve, reject) => this.queue.push({ line, resolve, reject }));
    this.kick();
    return done;
  }

  /** Resolves when every line appended so far is durable. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** New lines go to a fresh segment starting at `nextSeq`; returns the names of the older segments. */
  async rotate(nextSeq: number): Promise<string[]> {
    // Hold new flushes back while the current one finishes and the next segment opens.
    this.rotateTo = nextSeq;
    try {
      await this.drain();
      const older = (await listSegments(this.dir)).filter((s) => s.firstSeq < nextSeq);
      await this.openSegment(nextSeq);
      return older.map((s) => s.file);
    } finally {
      this.rotateTo = undefined;
      if (this.queue.length > 0) this.kick();
    }
  }

  async removeSegments(files: string[]): Promise<void> {
    // A first poll cycle leaves a 400 MB segment: freed at once, it stalled every fsync (removeGradually).
    for (const file of files) await removeGradually(path.join(this.dir, file));
    await syncDir(this.dir);
  }

  async close(): Promise<void> {
    await this.drain();
    await this.extending;
    await this.handle?.close();
    this.handle = undefined;
  }

  get failed(): Error | undefined {
    return this.failure;
  }

  private async openSegment(firstSeq: number): Promise<void> {
    await this.extending;
    await this.handle?.close();
    this.segmentFirstSeq = firstSeq;
    // 'w+': a file of this name holds no entry (recovery starts the new segment after the last
    // seq it read), at most the zeros or the torn line of a segment opened just before a crash.
    this.handle = await open(path.join(this.dir, segmentName(firstSeq)), 'w+');
    this.position = 0;
    this.allocated = 0;
    await syncDir(this.dir);
    // Zeros come with the first write (flushLoop): a segment nothing is written to stays empty.
  }

  /**
   * Zero-fills the next PREALLOCATE_BYTES of the segment in the background. It starts past the write
   * position plus some headroom, so the writes of the next moments do not wait for it; a write that
   * reaches the range before it is done waits (see flushLoop). A failure only means no preallocation.
   */
  private extend(): void {
    const handle = this.handle;
    if (this.extending || !handle) return;
    const from = Math.max(this.allocated, this.position + HEADROOM_BYTES);
    const to = from + PREALLOCATE_BYTES;
    this.reservedFrom = from;
    this.stopExtending = false;
    this.extending = (async () => {
      // Synced piece by piece: an fdatasync of the log (a webhook's commit) writes out every dirty page
      // of the file, so zeros written whole and synced once made the commits running meanwhile flush
      // up to 16 MB (WAL fsyncs of 50-250 ms right after start, a rotation or an extension).
      for (let at = from; at < to && !this.stopExtending; at += ZEROS.length) {
        const end = Math.min(at + ZEROS.length, to);
        await handle.write(ZEROS, 0, end - at, at);
        await handle.datasync();
        if (this.handle === handle) this.allocated = end;
      }
    })()
      .catch(() => {})
      .finally(() => {
        this.extending = undefined;
        this.reservedFrom = Infinity;
      });
  }

  private kick(): void {
    if (this.flushing || this.rotateTo !== undefined) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0 && !this.failure) this.kick();
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const lines = batch.map((item) => item.line);
        // Small batches (webhook acknowledgements) are written synchronously: a page-cache append of a
        // few KB costs less than the thread-pool round trip, which under load queues behind connector
        // writes. Big ones (a poll's chunks) go to the pool, where a disk throttling writeback can
        // hold a pool thread but never the event loop. The fsync always goes to the pool.
        const bytes = lines.every((line) => typeof line === 'string') ? Buffer.from(lines.join('')) : Buffer.concat(lines.map(toBuffer));
        if (this.position + bytes.length > this.reservedFrom) {
          // A bulk writer (a poll's commit) outruns the zeros: it writes on rather than waiting for
          // 16 MB of them (that doubled a first cycle's commit); the extension stops after its piece.
          this.stopExtending = true;
          await this.extending;
        }
        const at = this.position;
        const bytesWritten = bytes.length <= SYNC_WRITE_BYTES ? writeAllSync(this.handle!.fd, bytes, at) : await writeAll(this.handle!, bytes, at);
        this.position += bytesWritten;
        // datasync: the data, and the file size only when a write went past the preallocated zeros;
        // the segment's directory entry was synced at creation.
        const syncStarted = performance.now();
        await this.handle!.datasync();
        const syncMs = performance.now() - syncStarted;
        this.slowestSyncMs = Math.max(this.slowestSyncMs, syncMs);
        this.onSync?.(syncMs);
        this.bytes += bytesWritten;
        for (const item of batch) item.resolve();
        // Preallocation is for small appends (acknowledgements); a bulk batch would only outrun it.
        if (bytesWritten <= SYNC_WRITE_BYTES && this.allocated - this.position < PREALLOCATE_BYTES / 2) this.extend();
      } catch (error) {
        this.failure = error as Error;
        for (const item of [...batch, ...this.queue.splice(0)]) item.reject(this.failure);
        return;
      }
    }
  }
}

const toBuffer = (line: string | Buffer): Buffer => (typeof line === 'string' ? Buffer.from(line) : line);

/** Writes until every byte is written (a regular file may take a large buffer in parts). */
function writeAllSync(fd: number, buffer: Buffer, at: number): number {
  let written = 0;
  while (written < buffer.length) written += writeSync(fd, buffer, written, buffer.length - written, at + written);
  return written;
}

async function writeAll(handle: FileHandle, buffer: Buffer, at: number): Promise<number> {
  let written = 0;
  while (written < buffer.length) written += (await handle.write(buffer, written, buffer.length - written, at + written)).bytesWritten;
  return written;
}

/** One WAL line: `{"s":seq,"o":[ops]}`, using each put's ready-made `json`, `raw` or `rawJson` when it has one. */
export function walLine(entry: WalEntry): string | Buffer {
  if (!entry.ops.some(readyMade)) return `${JSON.stringify({ s: entry.seq, o: entry.ops })}\n`;
  if (!entry.ops.some(hasBytes)) return `{"s":${entry.seq},"o":[${entry.ops.map(opText).join(',')}]}\n`;
  // The ops are one text, encoded at once (a Buffer.from per op was 2.3 s of a first cycle's 300,000
  // records), followed by the raw values.
  const raws: Uint8Array[] = [Uint8Array.of(RAW_SEPARATOR)];
  let ops = `{"s":${entry.seq},"o":[`;
  for (let i = 0; i < entry.ops.length; i++) {
    const op = entry.ops[i] as Op;
    if (i > 0) ops += ',';
    if (op.op === 'put' && op.raw !== undefined) {
      ops += rawPutHeader(op.c, op.k, op.raw.length);
      raws.push(op.raw);
    } else if (op.op === 'put' && op.rawJson !== undefined) {
      let bytes = 0;
      for (const part of op.rawJson) {
        raws.push(part);
        bytes += part.length;
      }
      ops += `{"op":"put","c":${JSON.stringify(op.c)},"k":${JSON.stringify(op.k)},"j":${bytes}}`;
    } else {
      ops += opText(op);
    }
  }
  raws.push(Uint8Array.of(0x0a));
  return Buffer.concat([Buffer.from(`${ops}]}`), ...raws]);
}

function readyMade(op: Op): boolean {
  return op.op === 'put' && (op.json !== undefined || op.raw !== undefined || op.rawJson !== undefined);
}

function hasBytes(op: Op): boolean {
  return op.op === 'put' && (op.raw !== undefined || op.rawJson !== undefined);
}

/** One op as JSON, using a put's ready-made `json` (module level: a closure per line cost tsx's name helper). */
function opText(op: Op): string {
  if (op.op !== 'put') return JSON.stringify(op);
  if (op.json !== undefined) return `{"op":"put","c":${JSON.stringify(op.c)},"k":${JSON.stringify(op.k)},"v":${op.json}}`;
  return JSON.stringify({ op: op.op, c: op.c, k: op.k, v: op.v });
}

/** A line read back (without its newline): its ops, with each raw value (rawPutHeader, Op.rawJson) decoded in place. */
export function parseLine(line: Buffer): { s: number; o: Op[] } {
  const separator = line.indexOf(RAW_SEPARATOR);
  const parsed = JSON.parse(line.toString('utf8', 0, separator < 0 ? line.length : separator)) as { s: number; o: (Op & { r?: unknown; j?: unknown })[] };
  if (separator < 0) {
    // Ops naming raw values with no tab after them: a line cut right before its tab.
    if (parsed.o.some((op) => op.op === 'put' && (op.r !== undefined || op.j !== undefined))) throw new Error('the raw values of the line are missing');
    return parsed;
  }
  let at = separator + 1;
  for (const op of parsed.o) {
    if (op.op !== 'put' || (op.r === undefined && op.j === undefined)) continue;
    const bytes = op.r ?? op.j;
    if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0 || at + bytes > line.length) throw new Error('a raw value runs past the end of its line');
    // Decoded from the bytes, not sliced from a decoded line: a slice would keep the whole line alive.
    const text = line.toString('utf8', at, at + bytes);
    op.v = op.r !== undefined ? text : JSON.parse(text);
    delete op.r;
    delete op.j;
    at += bytes;
  }
  if (at !== line.length) throw new Error(`${line.length - at} bytes of raw values belong to no op`);
  return parsed;
}

export async function listSegments(dir: string): Promise<{ file: string; firstSeq: number }[]> {
  const names = await readdir(dir);
  return names
    .map((file) => ({ file, match: SEGMENT.exec(file) }))
    .filter((s) => s.match)
    .map((s) => ({ file: s.file, firstSeq: Number(s.match![1]) }))
    .sort((a, b) => a.firstSeq - b.firstSeq);
}

/**
 * Reads every segment in order. A torn last line (a crash mid-append) is dropped: it was never
 * acknowledged, because acknowledgement waits for the fsync. A broken line anywhere else is corruption.
 */
export async function readWal(dir: string, onEntry: (entry: WalEntry) => void): Promise<{ bytes: number; torn: { file: string; validBytes: number }[] }> {
  const segments = await listSegments(dir);
  let bytes = 0;
  const torn: { file: string; validBytes: number }[] = [];
  for (const segment of segments) {
    const file = path.join(dir, segment.file);
    // Line by line: a first poll cycle writes ~800 MB to one segment, more than fits in one string.
    // The lines end where the preallocated zeros begin.
    bytes += await readLines(
      file,
      (line, { number, start, terminated }) => {
        if (line.length === 0) return;
        let parsed: { s: number; o: Op[] };
        try {
          parsed = parseLine(line);
        } catch (error) {
          if (!terminated) {
            torn.push({ file, validBytes: start });
            return;
          }
          throw new Error(`${file}: line ${number} is not valid JSON (${(error as Error).message})`);
        }
        onEntry({ seq: parsed.s, ops: parsed.o });
      },
      { stopAtZero: true },
    );
  }
  return { bytes, torn };
}
