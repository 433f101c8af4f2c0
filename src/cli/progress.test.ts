import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { withProgress } from './progress.js';

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(out, { isTTY, columns: 80 });
  return { out, chunks };
}

describe('withProgress', () => {
  it('draws a line on a terminal and clears it at the end', async () => {
    const { out, chunks } = stream(true);
    const result = await withProgress('sync', () => '12 queued', async () => 42, out);
    expect(result).toBe(42);
    expect(chunks[0]).toContain('sync');
    expect(chunks[0]).toContain('12 queued');
    expect(chunks.at(-1)).toBe('\r\x1b[2K');
  });

  it('writes nothing when not a terminal (logs stay quiet)', async () => {
    const { out, chunks } = stream(false);
    await withProgress('sync', () => 'x', async () => undefined, out);
    expect(chunks).toEqual([]);
  });

  it('clears the line when the work fails', async () => {
    const { out, chunks } = stream(true);
    await expect(withProgress('sync', () => '', async () => Promise.reject(new Error('no')), out)).rejects.toThrow('no');
    expect(chunks.at(-1)).toBe('\r\x1b[2K');
  });
});
