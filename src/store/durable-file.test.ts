import { link, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/temp.js';
import { CollectionFile, isWriteLeftover, removeGradually, writeFileAtomic } from './durable-file.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function newDir(): Promise<string> {
  const temp = await tempDir();
  cleanups.push(temp.cleanup);
  return temp.dir;
}

/** A sparse file of `bytes` (no disk blocks needed) with a marker in its last bytes. */
async function bigFile(file: string, bytes: number): Promise<void> {
  const handle = await open(file, 'w');
  await handle.truncate(bytes);
  await handle.write('end', bytes - 3);
  await handle.close();
}

describe('writeFileAtomic', () => {
  it('replaces a file whole and leaves neither its temp file nor, with keepOld, its old name', async () => {
    const dir = await newDir();
    const file = path.join(dir, 'c.db.json');
    await writeFile(file, 'old content');
    const bytes = await writeFileAtomic(file, ['new ', 'content'], { keepOld: true });
    expect(bytes).toBe(11);
    expect(await readFile(file, 'utf8')).toBe('new content');
    expect(await readdir(dir)).toEqual(['c.db.json']);
  });

  it('writes a file that did not exist, with or without keepOld', async () => {
    const dir = await newDir();
    await writeFileAtomic(path.join(dir, 'a.db.json'), ['a'], { keepOld: true });
    await writeFileAtomic(path.join(dir, 'b.csv'), ['b']);
    expect((await readdir(dir)).sort()).toEqual(['a.db.json', 'b.csv']);
    expect(await readFile(path.join(dir, 'a.db.json'), 'utf8')).toBe('a');
  });

  it('removes an old name a crash left behind, and keeps the file it still names', async () => {
    const dir = await newDir();
    const file = path.join(dir, 'c.db.json');
    await writeFile(file, 'live');
    await link(file, `${file}.old`); // a crash between the link and the rename
    await writeFileAtomic(file, ['next'], { keepOld: true });
    expect(await readFile(file, 'utf8')).toBe('next');
    expect(await readdir(dir)).toEqual(['c.db.json']);
  });
});

describe('removeGradually', () => {
  it('removes a file larger than one step', async () => {
    const dir = await newDir();
    const file = path.join(dir, 'wal-000000000001.log');
    await bigFile(file, 40 * 1024 * 1024);
    await removeGradually(file);
    expect(await readdir(dir)).toEqual([]);
  });

  it('only unlinks a name whose file has another name: the other keeps all its bytes', async () => {
    const dir = await newDir();
    const live = path.join(dir, 'c.db.json');
    await bigFile(live, 40 * 1024 * 1024);
    await link(live, `${live}.old`);
    await removeGradually(`${live}.old`);
    expect(await readdir(dir)).toEqual(['c.db.json']);
    expect((await stat(live)).size).toBe(40 * 1024 * 1024);
    const tail = Buffer.alloc(3);
    const handle = await open(live, 'r');
    await handle.read(tail, 0, 3, 40 * 1024 * 1024 - 3);
    await handle.close();
    expect(tail.toString()).toBe('end');
  });

  it('is fine with a file that is not there', async () => {
    const dir = await newDir();
    await expect(removeGradually(path.join(dir, 'none'))).resolves.toBeUndefined();
  });
});

describe('isWriteLeftover', () => {
  it('knows the temp file and the old name of a write, and nothing else', () => {
    expect(isWriteLeftover('outbox.db.json.4242.tmp', '.db.json')).toBe(true);
    expect(isWriteLeftover('snapshot.users.db.json.old', '.db.json')).toBe(true);
    expect(isWriteLeftover('snapshot.users.db.json', '.db.json')).toBe(false);
    expect(isWriteLeftover('wal-000000000001.log', '.db.json')).toBe(false);
    expect(isWriteLeftover('outbox.db.json.x.tmp', '.db.json')).toBe(false);
    expect(isWriteLeftover('roster.csv.4242.tmp', '.db.json')).toBe(false);
    expect(isWriteLeftover('LOCK', '.db.json')).toBe(false);
  });
});

describe('CollectionFile', () => {
  const awkward = new Map<string, unknown>([
    ['plain', 1],
    ['with "quotes", a \\ and a\nnewline', 'value ending in a comma,'],
    ['żółw 😀', { nested: ['a', null, true, 2.5, { deeper: '}}' }] }],
    ['', '"q","r"'],
    ['last', null],
  ]);

  it('reads back what it wrote, entry by entry, whatever the keys and values hold', async () => {
    const file = path.join(await newDir(), 'c.db.json');
    await new CollectionFile(file).write({ seq: 42, entries: awkward });
    const reader = new CollectionFile(file);
    expect(await reader.read()).toEqual({ seq: 42, entries: awkward });
    expect(reader.bytes).toBe((await stat(file)).size);
    await new CollectionFile(file).write({ seq: 43, entries: new Map() });
    expect(await new CollectionFile(file).read()).toEqual({ seq: 43, entries: new Map() });
    expect(await new CollectionFile(path.join(path.dirname(file), 'none.db.json')).read()).toBeNull();
  });

  it('reads a document laid out another way (one line) whole', async () => {
    const file = path.join(await newDir(), 'c.db.json');
    await writeFile(file, JSON.stringify({ seq: 7, entries: Object.fromEntries(awkward) }));
    expect(await new CollectionFile(file).read()).toEqual({ seq: 7, entries: awkward });
  });

  it('refuses a document cut short or with text after its end', async () => {
    const file = path.join(await newDir(), 'c.db.json');
    await new CollectionFile(file).write({ seq: 1, entries: awkward });
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.lastIndexOf('}}')));
    await expect(new CollectionFile(file).read()).rejects.toThrow(/incomplete/);
    await writeFile(file, `${text}"more":1\n`);
    await expect(new CollectionFile(file).read()).rejects.toThrow(/after the end/);
    await writeFile(file, text.replace('"plain":1', 'plain:1'));
    await expect(new CollectionFile(file).read()).rejects.toThrow(/not a document entry/);
  });
});
