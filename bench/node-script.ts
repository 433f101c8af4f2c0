import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * Runs `code` in a Node.js process of its own (`node -e`, from the repository's root, so that it can
 * `require` the installed packages) with `args` as its process.argv[1…]; resolves with what it wrote
 * to stdout once it exits with 0.
 */
export function runNodeScript(code: string, args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, ['-e', code, ...args], { cwd: path.join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`node -e exited with ${code}`))));
  });
}
