import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/temp.js';

const FIXTURE = path.join(import.meta.dirname, '../../../test/fixtures/sqlite-handles-thread.mjs');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// Garbage-collected connections and statements used to abort Node.js 24 as a thread ended
// (an assertion in RemoveEnvironmentCleanupHook): the process must end as its code says.
it('lets threads that used SQLite, and then the process, end cleanly', async () => {
  const made = await tempDir('sb-handles-');
  cleanups.push(made.cleanup);
  const result = await new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [FIXTURE, path.join(made.dir, 'x.db')], (_error, stdout, stderr) =>
      resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
    );
  });
  expect(result.stderr).not.toContain('Assertion failed');
  expect(result).toMatchObject({ code: 0, signal: null, stdout: 'ok\n' });
});
