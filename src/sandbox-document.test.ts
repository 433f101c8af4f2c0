import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../test/support/temp.js';
import { sandboxDocument } from './sandbox-document.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('the sandbox document file', () => {
  it('names the file and what to do when it is not a whole JSON document, and leaves it as it was', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-doc-');
    cleanups.push(cleanup);
    const file = path.join(dir, 'sandbox.json');
    await writeFile(file, '{"format":1,"seed":');
    const error = await sandboxDocument(file).read().then(() => undefined, (e: unknown) => e as Error & { code?: string });
    expect(error?.code).toBe('sandbox.document_unreadable');
    expect(error?.message).toContain(file);
    expect(error?.message).toMatch(/move the file away/);
    expect(await readFile(file, 'utf8')).toBe('{"format":1,"seed":');
  });

  it('refuses a file holding null, which lowdb reads as no file', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-doc-');
    cleanups.push(cleanup);
    const file = path.join(dir, 'sandbox.json');
    await writeFile(file, 'null');
    await expect(sandboxDocument(file).read()).rejects.toMatchObject({ code: 'sandbox.document_unreadable', message: expect.stringContaining(`${file} (it holds null, not a saved school)`) as unknown });
  });

  it('reads nothing from a missing file, and reads back what it wrote', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-doc-');
    cleanups.push(cleanup);
    const document = sandboxDocument(path.join(dir, 'sandbox.json'));
    expect(await document.read()).toBeNull();
    const saved = { format: 1, seed: 2, students: 3 } as unknown as Parameters<typeof document.write>[0];
    await document.write(saved);
    expect(await document.read()).toEqual(saved);
  });

  it('leaves no temporary file behind when a write fails', async () => {
    const { dir, cleanup } = await tempDir('sb-sandbox-doc-');
    cleanups.push(cleanup);
    // The temporary file is written, and then cannot take the document's place (a directory has it).
    const file = path.join(dir, 'sandbox.json');
    await mkdir(path.join(file, 'taken'), { recursive: true });
    const saved = { format: 1, seed: 2, students: 3 } as unknown as Parameters<ReturnType<typeof sandboxDocument>['write']>[0];
    await expect(sandboxDocument(file).write(saved)).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['sandbox.json']);
  });
});
