import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOG_PARTS, partOf } from '../log-parts.js';
import { openDatabase } from './handles.js';
import { owedCounts } from './log.js';
import { rowCounts } from './outbox.js';
import { LOG_PLACES_VERSION, migrate } from './schema.js';
import { withOwed } from './with-owed.js';

/** The outbox's counts as the store adds them up (port-methods.ts), read here in one go. */
const counts = (db: Database.Database) => withOwed(rowCounts(db), Array.from({ length: LOG_PARTS }, (_, part) => owedCounts(db, part)));

/**
 * The log's owed counts (log.ts, owedCounts) read the rows made of log records by their place in
 * the log. A database written before they were marked gets their places when it is migrated, so a
 * record made a row while its batch was out is still counted once.
 */
describe('sqlite delivery log: owed counts after an upgrade', () => {
  let db: Database.Database;
  const now = 1_000_000;

  beforeEach(() => {
    db = openDatabase(':memory:');
    migrate(db, LOG_PLACES_VERSION - 1);
  });
  afterEach(() => db.close());

  it('marks the rows made of log records with their place in the log, and counts each record once', () => {
    const part = partOf('events:f');
    const log = db.prepare(`INSERT INTO outbox_log (part, record_id, stream, order_key, connectors, body, enqueued_at) VALUES (?, ?, 'events', ?, '["files"]', '{}', ?)`);
    // f2 waits as a row behind its key's dead head; the cursor has not passed it (its batch's lease was lost).
    const f2 = Number(log.run(part, 'events:f2', 'events:f', now).lastInsertRowid);
    log.run(part, 'events:f3', 'events:f', now);
    db.prepare(`INSERT INTO outbox_log_cursor (connector, part, after) VALUES ('files', ?, ?)`).run(part, f2 - 1);
    const row = db.prepare(`INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at, body)
      VALUES (?, 'files', ?, 'events', 'events:f', ?, ?, ?, '{}')`);
    row.run('files:events:f1', 'events:f1', 'dead', now, now);
    row.run('files:events:f2', 'events:f2', 'blocked', now, now);

    migrate(db);

    expect(db.prepare('SELECT id, log_part, log_seq FROM outbox_delivery ORDER BY id').all()).toEqual([
      { id: 'files:events:f1', log_part: null, log_seq: null },
      { id: 'files:events:f2', log_part: part, log_seq: f2 },
    ]);
    // f1 and f2 as rows, f3 in the log: three, not four.
    expect(counts(db).get('files')).toEqual({ depth: 2, dead: 1 });
  });
});
