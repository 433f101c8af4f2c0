import { readdir } from 'node:fs/promises';
import { BridgeError } from '../errors.js';

/**
 * A store directory of schoolbridge before the database engines (a write-ahead log `wal-*.log` and
 * lowdb documents `*.db.json`) is refused with what it is and what to do, never read or overwritten.
 */
export async function refuseOldFormat(dir: string): Promise<void> {
  const files = await readdir(dir).catch(() => [] as string[]);
  // A database of the new store beside them: this version has run here, whatever else is in it.
  if (files.includes('schoolbridge.db')) return;
  if (!files.some((f) => /^wal-.*\.log$/.test(f) || f.endsWith('.db.json'))) return;
  throw new BridgeError(
    'store.old_format',
    `${dir} holds a store of an older schoolbridge (write-ahead log and .db.json documents), which this version does not read: ` +
      'let the old version deliver what it holds (`deliveries list` empty), then move the directory away or set another store.dir; ' +
      'the new store starts with an empty snapshot (poll.initial: baseline avoids emitting every record again)',
  );
}
