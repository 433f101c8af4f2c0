import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { BridgeError } from '../errors.js';
import { makeDir, takenByFile } from '../files/make-dir.js';

/**
 * Errors of the file system as the fix a person makes: the config key whose directory is refused.
 * The daemon's directories come from the config (store.dir, a connector's dir or ledgerDir), so a
 * refused path is named by the key that set it.
 */
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS']);

/** Every directory the config names, with its key path, most specific first. */
export function configDirectories(config: Config): { key: string; dir: string }[] {
  const dirs: { key: string; dir: string }[] = [];
  config.connectors.forEach((connector, index) => {
    if ('dir' in connector && connector.dir) dirs.push({ key: `connectors[${index}].dir`, dir: connector.dir });
    if ('ledgerDir' in connector && connector.ledgerDir) dirs.push({ key: `connectors[${index}].ledgerDir`, dir: connector.ledgerDir });
  });
  if (config.store.driver === 'sqlite') dirs.push({ key: 'store.dir', dir: config.store.dir });
  return dirs.map((entry) => ({ ...entry, dir: path.resolve(entry.dir) })).sort((a, b) => b.dir.length - a.dir.length);
}

/** The config key whose directory holds `file` (or is one of its parents, being created). */
export function keyOfPath(config: Config, file: string): string | undefined {
  const target = path.resolve(file);
  const within = (dir: string, candidate: string) => candidate === dir || candidate.startsWith(`${dir}${path.sep}`);
  const dirs = configDirectories(config);
  // A path in a configured directory first; else a parent of one, refused while it was being created.
  return (dirs.find(({ dir }) => within(dir, target)) ?? dirs.findLast(({ dir }) => within(target, dir)))?.key;
}

/**
 * A refused file system call, or a directory whose path is taken by a file, as an error naming the
 * config key; anything else as it is.
 */
export function explainFsError(error: unknown, config: Config): unknown {
  const { code, path: file } = (error ?? {}) as { code?: unknown; path?: unknown };
  if (typeof code !== 'string' || typeof file !== 'string') return error;
  const taken = takenByFile(error);
  if (!taken && !REFUSED.has(code)) return error;
  const key = keyOfPath(config, file);
  if (!key) return error;
  if (taken) {
    const what = code === 'ENOTDIR' ? 'a part of its path is a file' : 'it exists and is not a directory';
    return new BridgeError('fs.not_a_directory', `${key}: cannot make the directory ${file}: ${what}; set ${key} to a directory`, { cause: error });
  }
  const who = typeof process.getuid === 'function' ? ` (user ${process.getuid()})` : '';
  const why = code === 'EROFS' ? 'the file system is read-only' : `permission denied${who}`;
  return new BridgeError('fs.not_writable', `${key}: cannot write to ${file}: ${why}; make it writable for this user, or set ${key} to a directory that is`, { cause: error });
}

/** For a promise's catch: throws what it caught, explained (explainFsError). */
export function rethrowExplained(config: Config): (error: unknown) => never {
  return (error) => {
    throw explainFsError(error, config);
  };
}

/** Creates the embedded store's directory and proves it writable before anything starts. */
export async function checkStoreDir(config: Config): Promise<void> {
  if (config.store.driver !== 'sqlite') return;
  try {
    await makeDir(config.store.dir);
    await access(config.store.dir, constants.W_OK);
  } catch (error) {
    throw explainFsError(await whyNotCreated(config.store.dir, error), config);
  }
}

/**
 * A recursive mkdir that fails on a read-only file system reports ENOENT (Node.js stats the path
 * after EROFS); the nearest directory that exists says why. One this user may write that still
 * takes no new directory (a virtual file system: /proc, /sys) is named as such.
 */
async function whyNotCreated(dir: string, error: unknown): Promise<unknown> {
  if ((error as { code?: unknown }).code !== 'ENOENT') return error;
  for (let at = path.dirname(path.resolve(dir)); ; at = path.dirname(at)) {
    try {
      await access(at, constants.W_OK);
      return new BridgeError(
        'fs.not_writable',
        `store.dir: cannot make the directory ${path.resolve(dir)}: ${at} takes no new directories (a virtual file system?); set store.dir to a directory on a disk`,
        { cause: error },
      );
    } catch (refused) {
      if ((refused as { code?: unknown }).code !== 'ENOENT') return Object.assign(refused as Error, { path: dir });
    }
    if (at === path.dirname(at)) return error;
  }
}
