import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * The sandbox in a child process of its own (`schoolbridge sandbox`), as a bench's upstream: its
 * list rendering and its logs stay off the measured process. Resolves with its URL once it listens.
 */
export async function startSandboxProcess(options: { students: number; clientSecret: string; staticToken: string }): Promise<{ url: string; child: ChildProcess }> {
  const bin = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
  const child = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--students', String(options.students), '--client-secret', options.clientSecret, '--static-token', options.staticToken], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (match) resolve(match[0]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code}): ${output.slice(-500)}`)));
  });
  // From here on its output is read and dropped (a full pipe would block the sandbox): it logs for the
  // whole run, up to megabytes at once, and decoding and scanning all of it on the bench's thread
  // stalled the daemon beside it late in a run.
  for (const stream of [child.stdout, child.stderr]) stream?.removeAllListeners('data').on('data', () => {});
  return { url, child };
}
