import { open } from 'node:fs/promises';

/** Bytes read at a time (readLines). */
const CHUNK_BYTES = 8 * 1024 * 1024;
const NEWLINE = 0x0a;

export interface LineInfo {
  /** 1-based. */
  number: number;
  /** Byte offset of the line's first byte in the file. */
  start: number;
  /** False for a last line with no newline after it (a write cut short, or just no final newline). */
  terminated: boolean;
}

export interface ReadLinesOptions {
  chunkBytes?: number;
}

/**
 * Calls `onLine` with the bytes of each line of `file` (without its newline; a view, valid during
 * the call), read `chunkBytes` at a time, for the caller to decode line by line. Never the whole file
 * as one string: V8 caps a string at 2^29 - 24
 * characters (~512 MiB), and a `.jsonl` file of a big school's first poll passes that. Resolves with
 * the number of bytes read.
 * Lines are split on the newline byte, which never occurs inside a multi-byte UTF-8 character.
 */
export async function readLines(file: string, onLine: (line: Buffer, info: LineInfo) => void, options: ReadLinesOptions = {}): Promise<number> {
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const handle = await open(file, 'r');
  try {
    let position = 0;
    let number = 0;
    /** The start of a line the chunks read so far have not ended, and its bytes. */
    let pendingStart = 0;
    let pending: Buffer[] = [];
    for (;;) {
      // A fresh buffer per read: a pending line keeps a view of it rather than a copy.
      const chunk = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      let from = 0;
      for (let at = data.indexOf(NEWLINE); at >= 0; at = data.indexOf(NEWLINE, from)) {
        const start = pending.length > 0 ? pendingStart : position + from;
        const bytes = pending.length > 0 ? Buffer.concat([...pending, data.subarray(from, at)]) : data.subarray(from, at);
        pending = [];
        onLine(bytes, { number: ++number, start, terminated: true });
        from = at + 1;
      }
      if (from < data.length) {
        if (pending.length === 0) pendingStart = position + from;
        pending.push(data.subarray(from));
      }
      position += data.length;
    }
    if (pending.length > 0) onLine(Buffer.concat(pending), { number: ++number, start: pendingStart, terminated: false });
    return position;
  } finally {
    await handle.close();
  }
}
