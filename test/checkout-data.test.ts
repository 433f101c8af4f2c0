import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changes, listing } from './support/checkout-data.js';
import { tempDir } from './support/temp.js';

describe('the checkout data guard', () => {
  it('names each file a run added, removed or changed, and nothing else', async () => {
    const { dir, cleanup } = await tempDir('checkout-data-');
    try {
      const data = path.join(dir, 'data');
      expect(await listing(data)).toEqual(new Map());
      await mkdir(path.join(data, 'out'), { recursive: true });
      await writeFile(path.join(data, 'sandbox.json'), '{}');
      await writeFile(path.join(data, 'kept.db'), 'x');
      await writeFile(path.join(data, 'out', 'students.jsonl'), '{}\n');
      const before = await listing(data);
      expect([...before.keys()].sort()).toEqual(['kept.db', path.join('out', 'students.jsonl'), 'sandbox.json']);
      expect(changes(before, await listing(data))).toEqual([]);

      await writeFile(path.join(data, 'sandbox.json'), '{"students":[]}');
      await rm(path.join(data, 'out', 'students.jsonl'));
      await writeFile(path.join(data, 'schoolbridge.db'), '');
      expect(changes(before, await listing(data))).toEqual(['out/students.jsonl (removed)', 'sandbox.json (changed)', 'schoolbridge.db (added)']);
    } finally {
      await cleanup();
    }
  });

  it('sees a file rewritten with the same size', async () => {
    const { dir, cleanup } = await tempDir('checkout-data-');
    try {
      const file = path.join(dir, 'sandbox.json');
      await writeFile(file, 'aaaa');
      await utimes(file, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
      const before = await listing(dir);
      await writeFile(file, 'bbbb');
      expect(changes(before, await listing(dir))).toEqual(['sandbox.json (changed)']);
    } finally {
      await cleanup();
    }
  });
});
