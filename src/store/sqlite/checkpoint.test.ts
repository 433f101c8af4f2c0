import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/net.js';
import { tempDir } from '../../../test/support/temp.js';
import { createSqliteStore, DATABASE_FILE } from './sqlite-store.js';

/**
 * The checkpointer thread (checkpoint-thread.mjs) copies committed WAL frames into the database file
 * by itself: SQLite's automatic checkpoint is off in the database thread, so without it the file
 * would stay as the schema left it while the WAL grew.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('sqlite checkpointer', () => {
  it('copies what was committed into the database file while the store runs', async () => {
    const { dir, cleanup } = await tempDir('sb-checkpoint-');
    cleanups.push(cleanup);
    const store = createSqliteStore({ dir, log: pino({ level: 'silent' }) });
    await store.start();
    cleanups.push(() => store.stop());
    const file = path.join(dir, DATABASE_FILE);
    const before = (await stat(file)).size;
    const text = 'x'.repeat(2000);
    await store.outbox.enqueue(Array.from({ length: 500 }, (_, i) => ({
      id: `events:e${i}`, stream: 'events' as const, orderKey: `events:${i}`, json: `{"id":"events:e${i}","pad":"${text}"}`, connectors: ['files'],
    })));
    // A megabyte of deliveries committed; the checkpointer runs every 200 ms.
    const after = await eventually(async () => {
      const size = (await stat(file)).size;
      return size >= before + 1_000_000 ? size : undefined;
    }, 10_000, 'the database file to hold the deliveries');
    expect(after).toBeGreaterThan(before);
  });

  it('starts a long WAL over while commits go on, and runs the bulk calls held for it', async () => {
    const { dir, cleanup } = await tempDir('sb-checkpoint-');
    cleanups.push(cleanup);
    // 64 frames: a restart every few hundred kilobytes committed.
    const store = createSqliteStore({ dir, log: pino({ level: 'silent' }), walRestartFrames: 64 });
    await store.start();
    cleanups.push(() => store.stop());
    const wal = `${path.join(dir, DATABASE_FILE)}-wal`;
    const first = await checkpointSequence(wal);
    const text = 'x'.repeat(2000);
    let round = 0;
    // Small calls (enqueue) and bulk calls (list), at once, until the WAL has started over twice;
    // a bulk call held for a restart that never came would never resolve, and this would time out.
    await eventually(async () => {
      round += 1;
      const records = Array.from({ length: 100 }, (_, i) => ({
        id: `events:r${round}-${i}`, stream: 'events' as const, orderKey: `events:r${round}-${i}`, json: `{"pad":"${text}"}`, connectors: ['files'],
      }));
      const [, listed] = await Promise.all([store.outbox.enqueue(records), store.outbox.list({ connector: 'files' })]);
      expect(listed.length).toBeGreaterThan(0);
      const sequence = await checkpointSequence(wal);
      return sequence >= first + 2 ? sequence : undefined;
    }, 20_000, 'the WAL to start over twice');
  });
});

/** The WAL header's checkpoint sequence number (bytes 12-15, big-endian): one more at every restart. */
async function checkpointSequence(wal: string): Promise<number> {
  const handle = await open(wal, 'r');
  try {
    const header = Buffer.alloc(32);
    await handle.read(header, 0, 32, 0);
    return header.readUInt32BE(12);
  } finally {
    await handle.close();
  }
}
