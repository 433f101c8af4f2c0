import path from 'node:path';

const LOADER = path.join(import.meta.dirname, '..', '..', 'src', 'load-typescript.mjs');

/**
 * The arguments that run a TypeScript file as a child process (`spawn(process.execPath, ...)`) the
 * way the executable runs its sources (src/load-typescript.mjs): one bundle, not a loader per module.
 */
export function typeScriptArgs(file: string, ...args: string[]): string[] {
  return [LOADER, file, ...args];
}
