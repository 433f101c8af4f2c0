import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A failing test fails the run: vitest with the project's config — the global setup that starts
 * PostgreSQL included — exits 1 when a test fails, so `npm test` and CI cannot pass a failing suite.
 */
describe('the test run', () => {
  it('exits 1 when a test fails', async () => {
    const vitest = path.resolve('node_modules/vitest/vitest.mjs');
    const { FORCE_COLOR: _color, ...env } = process.env;
    const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(process.execPath, [vitest, 'run', '--config', 'test/fixtures/exit-code/vitest.config.ts'], { env: { ...env, CI: 'true', NO_COLOR: '1' } }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout + stderr }),
      );
    });
    expect(run.output).toMatch(/Tests +1 failed/);
    expect(run.code).toBe(1);
  }, 120_000);

  // A bench that loads it (bench:kill9) reports a failed check by its exit code.
  it('keeps the exit code of a process that loads the test PostgreSQL', async () => {
    const code = await new Promise<number | null>((resolve) => {
      const child = execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "await import('./test/support/postgres.ts'); process.exitCode = 3"], () => resolve(child.exitCode));
    });
    expect(code).toBe(3);
  }, 60_000);
});
