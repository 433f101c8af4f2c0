import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Test files share one process (vitest.config.ts), where a module is evaluated once: a hook a
 * support module registers as it is imported would serve the first test file that imports it alone,
 * and the next files would run without it (their servers left listening, their stores left open).
 * So no module in test/support/ registers a hook at its top level; it exports a `use…()` that a test
 * file calls. The leak guard is the exception: it is a setup file, which vitest runs for every file.
 */
const SUPPORT = path.resolve('test/support');
const SETUP_FILES = new Set(['leak-guard.ts']);
const TOP_LEVEL_HOOK = /^(?:beforeAll|beforeEach|afterAll|afterEach)\(/m;

/** The support modules whose top level registers a hook, with the first such line. */
async function withTopLevelHooks(dir: string, skip: ReadonlySet<string> = new Set()): Promise<string[]> {
  const found: string[] = [];
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.ts') && !skip.has(file)).sort()) {
    const text = await readFile(path.join(dir, name), 'utf8');
    const hook = TOP_LEVEL_HOOK.exec(text);
    if (hook) found.push(`${name}:${text.slice(0, hook.index).split('\n').length}`);
  }
  return found;
}

describe('test/support', () => {
  it('registers no hook when a module is imported: a test file calls its use…()', async () => {
    expect(await withTopLevelHooks(SUPPORT, SETUP_FILES)).toEqual([]);
  });

  it('finds a hook at the top level of a module, and not one inside a function', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'support-hooks-'));
    try {
      await writeFile(path.join(dir, 'inside.ts'), "import { afterEach } from 'vitest';\nexport function useIt(): void {\n  afterEach(() => {});\n}\n");
      await writeFile(path.join(dir, 'top.ts'), "import { afterEach } from 'vitest';\n\nafterEach(() => {});\n");
      expect(await withTopLevelHooks(dir)).toEqual(['top.ts:3']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
