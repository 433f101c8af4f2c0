import { spawn } from 'node:child_process';
import { daemonNodeFlags } from '../test/support/daemon-flags.js';

/**
 * A bench that runs the daemon in its own process runs it as `npm start` does, with the options the
 * start script gives Node.js (test/support/daemon-flags.ts). Started without them (`npm run bench:…`
 * runs tsx), it starts itself again with them: this resolves with that run's exit code, or with
 * `undefined` when this process has them already and is to run the bench itself.
 */
export async function rerunWithDaemonFlags(): Promise<number | undefined> {
  const flags = daemonNodeFlags();
  if (flags.every((flag) => process.execArgv.includes(flag))) return undefined;
  const child = spawn(process.execPath, [...flags, ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Options for a child process that is not the daemon (a load generator): this process's, less the daemon's. */
export function withoutDaemonFlags(): string[] {
  const flags = new Set(daemonNodeFlags());
  return process.execArgv.filter((option) => !flags.has(option));
}
