import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Characters written per write call, so a large file is never one huge string. */
const WRITE_CHUNK_CHARS = 256 * 1024;

/**
 * Writes `file` so that a crash at any instant leaves either the old or the new content, whole:
 * write a temp file, fsync it, rename it over, fsync the directory (so the rename itself is durable).
 * `chunks` is consumed piece by piece. Resolves with the bytes written.
 */
export async function writeFileAtomic(file: string, chunks: AsyncIterable<string> | Iterable<string>): Promise<number> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, 'w');
  let bytes = 0;
  try {
    let buffer = '';
    for await (const chunk of chunks) {
      buffer += chunk;
      if (buffer.length < WRITE_CHUNK_CHARS) continue;
      bytes += (await handle.write(buffer)).bytesWritten;
      buffer = '';
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

/** Makes a directory's entries durable (a file created or renamed in it). */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Cuts `file` back to `size` bytes and syncs it, so that the cut survives a power cut (an append that
 * failed, whose bytes may be read back from the page cache and yet never reach the disk).
 */
export async function truncateDurably(file: string, size: number): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.truncate(size);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
