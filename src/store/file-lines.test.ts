import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/temp.js';
import { readLines, type LineInfo } from './file-lines.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(() => cleanup());

async function linesOf(content: Buffer, options: { chunkBytes: number; stopAtZero?: boolean }) {
  const file = path.join(dir, 'lines.txt');
  await writeFile(file, content);
  const lines: [string, LineInfo][] = [];
  const bytes = await readLines(file, (line, info) => lines.push([line.toString('utf8'), info]), options);
  return { lines, bytes };
}

/** What readLines should report, from the whole content at once. */
function expected(content: Buffer, stopAtZero: boolean) {
  const zero = stopAtZero ? content.indexOf(0) : -1;
  const data = zero >= 0 ? content.subarray(0, zero) : content;
  const lines: [string, LineInfo][] = [];
  let start = 0;
  for (let number = 1; start < data.length; number++) {
    const end = data.indexOf(0x0a, start);
    const stop = end < 0 ? data.length : end;
    lines.push([data.toString('utf8', start, stop), { number, start, terminated: end >= 0 }]);
    start = stop + 1;
  }
  return { lines, bytes: data.length };
}

// Text with multi-byte characters (2, 3 and 4 bytes in UTF-8), so chunk cuts fall inside them.
const line = fc.array(fc.constantFrom('a', '"', ',', 'ł', '€', '😀', '\\', ' '), { maxLength: 12 }).map((chars) => chars.join(''));

describe('readLines', () => {
  it('reports every line, its number, byte offset and whether a newline ended it, whatever the chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 8 }),
        fc.boolean(),
        fc.nat({ max: 6 }),
        fc.integer({ min: 1, max: 16 }),
        fc.boolean(),
        async (lines, finalNewline, zeros, chunkBytes, stopAtZero) => {
          const text = lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '');
          const content = Buffer.concat([Buffer.from(text), Buffer.alloc(zeros)]);
          expect(await linesOf(content, { chunkBytes, stopAtZero })).toEqual(expected(content, stopAtZero));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('stops at the first zero byte when asked to, and not otherwise', async () => {
    const content = Buffer.concat([Buffer.from('one\ntwo\n'), Buffer.alloc(5), Buffer.from('three\n')]);
    const stopped = await linesOf(content, { chunkBytes: 4, stopAtZero: true });
    expect(stopped.lines.map(([text]) => text)).toEqual(['one', 'two']);
    expect(stopped.bytes).toBe(8);
    const whole = await linesOf(content, { chunkBytes: 4 });
    expect(whole.lines.map(([text]) => text)).toEqual(['one', 'two', '\0\0\0\0\0three']);
    expect(whole.bytes).toBe(content.length);
  });
});
