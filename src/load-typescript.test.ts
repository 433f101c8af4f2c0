import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../test/support/temp.js';

/**
 * The loader in a tree of its own (its root is the directory above the loader): the project's
 * packages linked in, one TypeScript entry importing another module and a file beside itself.
 */
const PACKAGES = path.join(import.meta.dirname, '..', 'node_modules');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function tree(): Promise<string> {
  const { dir, cleanup } = await tempDir('sb-loader-');
  cleanups.push(cleanup);
  await mkdir(path.join(dir, 'src'));
  await mkdir(path.join(dir, 'node_modules'));
  for (const name of ['esbuild', '@esbuild', 'tsx']) await symlink(path.join(PACKAGES, name), path.join(dir, 'node_modules', name));
  for (const file of ['load-typescript.mjs', 'source-map-of-sources.mjs']) await copyFile(path.join(import.meta.dirname, file), path.join(dir, 'src', file));
  await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }');
  await writeFile(path.join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }');
  await writeFile(path.join(dir, 'src', 'word.ts'), "export const word: string = 'first';\n");
  await writeFile(path.join(dir, 'src', 'main.ts'), [
    "import { readFileSync } from 'node:fs';",
    "import { word } from './word.js';",
    "const beside = readFileSync(new URL('./beside.txt', import.meta.url), 'utf8');",
    'console.log(JSON.stringify({ word, beside, url: import.meta.url, args: process.argv.slice(2) }));',
  ].join('\n'));
  await writeFile(path.join(dir, 'src', 'beside.txt'), 'found');
  return dir;
}

function run(dir: string, ...args: string[]): Promise<{ word: string; beside: string; url: string; args: string[] }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(dir, 'src', 'load-typescript.mjs'), path.join(dir, 'src', 'main.ts'), ...args], (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as never));
  });
}

const cached = async (dir: string) => (await readdir(path.join(dir, 'node_modules', '.cache', 'schoolbridge')).catch(() => [] as string[])).sort();

describe('src/load-typescript.mjs', () => {
  it('runs an entry from its bundle, which keeps each module its own URL and the arguments', async () => {
    const dir = await tree();
    const output = await run(dir, 'a', 'b');
    expect(output).toEqual({ word: 'first', beside: 'found', url: pathToFileURL(path.join(dir, 'src', 'main.ts')).href, args: ['a', 'b'] });
    // Where Node.js has a compile cache (22.1 and later), the bundle's compiled code is kept beside it.
    const compiled = 'enableCompileCache' in module;
    expect(await cached(dir)).toEqual([...(compiled ? ['compiled'] : []), 'src+main.json', 'src+main.mjs', 'src+main.mjs.map']);
    if (compiled) expect(await readdir(path.join(dir, 'node_modules', '.cache', 'schoolbridge', 'compiled'))).not.toEqual([]);
  });

  it('leaves no esbuild process running once the bundle is built', async () => {
    const dir = await tree();
    // The entry's own child processes, from every thread's list (Linux). esbuild's service is told to
    // end as the build ends and goes a moment later: the entry looks until it is gone, for 5 s at most.
    await writeFile(path.join(dir, 'src', 'children.ts'), [
      "import { readdirSync, readFileSync } from 'node:fs';",
      "import { setTimeout as delay } from 'node:timers/promises';",
      "const children = (): string[] => readdirSync('/proc/self/task').flatMap((tid) => readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean));",
      'const until = Date.now() + 5000;',
      'while (children().length > 0 && Date.now() < until) await delay(10);',
      'console.log(JSON.stringify(children()));',
    ].join('\n'));
    const children = await new Promise<string[]>((resolve, reject) => {
      execFile(process.execPath, [path.join(dir, 'src', 'load-typescript.mjs'), path.join(dir, 'src', 'children.ts')], (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as string[]));
    });
    expect(await cached(dir)).toContain('src+children.mjs');
    expect(children).toEqual([]);
  });

  it('builds the bundle again when a source it holds changed', async () => {
    const dir = await tree();
    expect((await run(dir)).word).toBe('first');
    const word = path.join(dir, 'src', 'word.ts');
    await writeFile(word, "export const word: string = 'second';\n");
    // A later time than the first build's, whatever the file system's timestamp resolution.
    await utimes(word, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    expect((await run(dir)).word).toBe('second');
  });

  it('bundles a CommonJS package, and builds again after an install that changed it', async () => {
    const dir = await tree();
    const pkg = path.join(dir, 'node_modules', 'greeting');
    await mkdir(pkg);
    await writeFile(path.join(pkg, 'package.json'), '{ "name": "greeting", "version": "1.0.0", "main": "index.js" }');
    // Its require() of Node's own modules goes through the bundle's.
    const source = (word: string) => `const { basename } = require('node:path');\nexports.word = basename('/${word}');\n`;
    const index = path.join(pkg, 'index.js');
    const installed = path.join(dir, 'node_modules', '.package-lock.json');
    const sameTime = new Date('1985-10-26T08:15:00Z');
    await writeFile(index, source('hello'));
    await utimes(index, sameTime, sameTime);
    await writeFile(installed, '{ "lockfileVersion": 3 }');
    await writeFile(path.join(dir, 'src', 'word.ts'), "import { word as greeting } from 'greeting';\nexport const word: string = greeting;\n");
    expect((await run(dir)).word).toBe('hello');
    const bundle = path.join(dir, 'node_modules', '.cache', 'schoolbridge', 'src+main.mjs');
    // In the bundle, not imported from node_modules.
    expect(await readFile(bundle, 'utf8')).toContain('// node_modules/greeting/index.js');
    // Its source map names the project's sources alone.
    const map = JSON.parse(await readFile(`${bundle}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources.map((source) => path.resolve(path.dirname(bundle), source)).sort()).toEqual([path.join(dir, 'src', 'main.ts'), path.join(dir, 'src', 'word.ts')]);
    // An install as npm makes it: the package's file has the same size and time, its record is new.
    await writeFile(index, source('howdy'));
    await utimes(index, sameTime, sameTime);
    await writeFile(installed, '{ "lockfileVersion": 3, "packages": {} }');
    expect((await run(dir)).word).toBe('howdy');
  });

  it('runs the sources through tsx where no bundle can be kept', async () => {
    const dir = await tree();
    // A file where the cache directory would be: nothing can be written under it, even as root.
    await writeFile(path.join(dir, 'node_modules', '.cache'), '');
    expect(await run(dir, 'c')).toEqual({ word: 'first', beside: 'found', url: pathToFileURL(path.join(dir, 'src', 'main.ts')).href, args: ['c'] });
  });
});
