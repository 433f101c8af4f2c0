import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/temp.js';
import { readLines, type LineInfo } from './lines.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(() => cleanup());

async function linesOf(content: Buffer, options: { chunkBytes: number }) {
  const file = path.join(dir, 'lines.txt');
  await writeFile(file, content);
  const lines: [string, LineInfo][] = [];
  const bytes = await readLines(file, (line, info) => lines.push([line.toString('utf8'), info]), options);
  return { lines, bytes };
}

/** What readLines should report, from the whole content at once. */
function expected(data: Buffer) {
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
        async (lines, finalNewline, zeros, chunkBytes) => {
          const text = lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '');
          const content = Buffer.concat([Buffer.from(text), Buffer.alloc(zeros)]);
          expect(await linesOf(content, { chunkBytes })).toEqual(expected(content));
        },
      ),
      { numRuns: 200 },
    );
  });
});
