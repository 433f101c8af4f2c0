import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The options `npm start` gives Node.js for the daemon (package.json's `start` script): the benches
 * run their daemons with them, so that they measure the daemon as it is started, and the image's
 * entrypoint has the same (test/image/lint.test.ts).
 */
export function daemonNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start!.split(/\s+/);
  const flags = words.slice(words.indexOf('node') + 1, words.indexOf('bin/schoolbridge.js'));
  if (flags.some((flag) => !flag.startsWith('--'))) throw new Error(`not options of node in package.json's start script: ${pkg.scripts.start}`);
  return flags;
}
