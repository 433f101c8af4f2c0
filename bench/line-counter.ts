import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Complete lines in the `.jsonl` files of `dir` (a `file` connector's). Each file is read on from
 * the end of the last complete line counted, never from the end of what was read: a restart cuts a
 * torn last line off and appends after it, so the bytes past that line's start change, and counting
 * on from the old end would skip the newlines written there (bench:kill9's wait for all lines then
 * never ends). A file cut back further than that is counted again from its start.
 */
export function lineCounter(dir: string): () => Promise<number> {
  const counted = new Map<string, { offset: number; lines: number }>();
  const buffer = Buffer.alloc(1 << 20);
  return async () => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith('.jsonl')) continue;
      const file = path.join(dir, name);
      const size = (await stat(file)).size;
      let seen = counted.get(name) ?? { offset: 0, lines: 0 };
      if (size < seen.offset) seen = { offset: 0, lines: 0 };
      counted.set(name, seen);
      const handle = await open(file, 'r');
      try {
        let position = seen.offset;
        while (position < size) {
          const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
          if (bytesRead === 0) break;
          for (let i = 0; i < bytesRead; i += 1) {
            if (buffer[i] !== 10) continue;
            seen.lines += 1;
            seen.offset = position + i + 1;
          }
          position += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
    let lines = 0;
    for (const { lines: n } of counted.values()) lines += n;
    return lines;
  };
}
