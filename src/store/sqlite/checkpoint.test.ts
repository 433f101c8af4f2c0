import { stat } from 'node:fs/promises';
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
});
