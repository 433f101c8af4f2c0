import { appendFile, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lineCounter } from '../bench/line-counter.js';

/** bench:kill9 waits on this count for every record to be in the files: one line missed, and it waits forever. */
describe("bench:kill9's line counter", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-lines-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts the complete lines of every .jsonl file, reading on from the last one', async () => {
    const lines = lineCounter(dir);
    expect(await lines()).toBe(0);
    await writeFile(path.join(dir, 'students.jsonl'), 'a\nb\n');
    await writeFile(path.join(dir, 'notes.txt'), 'x\ny\n');
    expect(await lines()).toBe(2);
    await appendFile(path.join(dir, 'students.jsonl'), 'c\nd');
    await writeFile(path.join(dir, 'users.jsonl'), 'u\n');
    expect(await lines()).toBe(4);
    await appendFile(path.join(dir, 'students.jsonl'), '\n');
    expect(await lines()).toBe(5);
  });

  it('counts the lines written over a torn last line once it was cut off, whatever was read of it', async () => {
    const file = path.join(dir, 'students.jsonl');
    const lines = lineCounter(dir);
    await writeFile(file, 'a\nb\nto');
    expect(await lines()).toBe(2);
    // A restart cuts the torn line and appends past where the last read ended, before the next read.
    await truncate(file, 4);
    await appendFile(file, 'c\nd\ne\n');
    expect(await lines()).toBe(5);
  });

  it('counts a file again from its start when it was cut back past the lines counted', async () => {
    const file = path.join(dir, 'students.jsonl');
    const lines = lineCounter(dir);
    await writeFile(file, 'a\nb\nc\n');
    expect(await lines()).toBe(3);
    await truncate(file, 2);
    expect(await lines()).toBe(1);
  });
});
