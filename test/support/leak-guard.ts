import fs, { type promises } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, beforeAll } from 'vitest';

/**
 * Guards against leaks: when a test file ends, after its own hooks, no TCP server it started may
 * still listen, and no file it opened through `fs/promises` may still be open (a FileHandle left to
 * the garbage collector closes with a warning, in whichever later test file the collector runs).
 * Timers are not counted: libraries keep harmless unref'd ones.
 */
type FileHandle = promises.FileHandle;
const OPEN_FILES = Symbol.for('schoolbridge.test.openFiles');
const holder = globalThis as { [OPEN_FILES]?: Map<FileHandle, string> };
if (!holder[OPEN_FILES]) {
  // Once per process (setup files run again for each test file): every handle, with where it was opened.
  const open = new Map<FileHandle, string>();
  holder[OPEN_FILES] = open;
  const real = fs.promises.open;
  fs.promises.open = async (...args: Parameters<typeof real>) => {
    const handle = await real(...args);
    open.set(handle, `${String(args[0])}, opened${(new Error().stack ?? '').split('\n').slice(2, 6).join('\n')}`);
    const close = handle.close.bind(handle);
    handle.close = () => {
      open.delete(handle);
      return close();
    };
    return handle;
  };
  // `import { open } from 'node:fs/promises'` then gets the wrapper too.
  syncBuiltinESMExports();
}
const openFiles = holder[OPEN_FILES]!;

const listening = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'PipeServerWrap').length;
/**
 * Servers listening when the file started: test files share a process (vitest.config.ts), so one
 * left by an earlier file fails that file, not every file after it.
 */
let before = 0;

beforeAll(() => {
  openFiles.clear();
  before = listening();
});

afterAll(async () => {
  // A closed server's handle is released on the next turn of the loop.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 10));
  const left = listening() - before;
  if (left > 0) throw new Error(`this test file left ${left} server(s) listening: close them in afterEach/afterAll`);
  const files = [...openFiles].filter(([handle]) => handle.fd >= 0).map(([, where]) => where);
  if (files.length > 0) throw new Error(`this test file left ${files.length} file(s) open: close them in afterEach/afterAll\n${files.join('\n')}`);
});
