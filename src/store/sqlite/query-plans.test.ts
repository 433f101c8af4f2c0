import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './handles.js';
import { MADE_ROWS, NEXT_RECORDS, OWED_COUNTS, OWED_OF_ID, OWED_OF_KEY, OWED_OF_PART, PRUNE, ROWS_QUEUED } from './log.js';
import { PRUNE_ATTEMPTS, PRUNE_RUNS } from './history.js';
import { PRUNE_EVENTS, WINDOW_END, WINDOW_MATCHES } from './inbox.js';
import { COUNTS, DEAD_CHUNK, DUE, LIST_DEAD } from './outbox.js';
import { MARKED, MARKED_GONE } from './people.js';
import { QUEUED_KEYS } from './ranges.js';
import { migrate } from './schema.js';
import { sql } from './statements.js';

/**
 * Statements that run often on the database thread, which webhooks wait for, while deliveries may be
 * queued by the hundred thousand: each must find its rows through an index, never by reading every
 * delivery with its record's text.
 */
describe('sqlite query plans', () => {
  let db: Database.Database;

  // The schema in memory: a plan depends on the tables and indexes, not on where they are kept.
  // (openDatabase and sql keep the connection and its statements referenced: handles.ts.)
  beforeEach(() => {
    db = openDatabase(':memory:');
    migrate(db);
  });
  afterEach(() => db.close());

  const steps = (text: string, params: unknown[] = []) =>
    (sql(db, `EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[]).map((r) => r.detail);

  it('forgets old events, attempts and runs by walking an index from their oldest, never reading the whole table', () => {
    expect(steps(PRUNE_EVENTS, [0, 2000]).filter((step) => /inbox/.test(step))).toEqual([
      'SEARCH inbox USING INTEGER PRIMARY KEY (rowid=?)', 'SEARCH inbox USING COVERING INDEX inbox_received (received_at_ms<?)',
    ]);
    for (const [statement, table] of [[PRUNE_ATTEMPTS, 'delivery_attempt'], [PRUNE_RUNS, 'run']] as const) {
      expect(steps(statement, [{ before: 0, limit: 2000 }]).filter((step) => step.includes(table))).toEqual([
        // The scan is the chunk's head: in rowid order, so it stops after `limit` rows.
        `SEARCH ${table} USING INTEGER PRIMARY KEY (rowid<?)`, `SCAN ${table}`,
      ]);
    }
  });

  it('retries a chunk of the dead after the last one retried: of a connector by outbox_dead, of all by the sequence', () => {
    const found = (connector: boolean) =>
      steps(DEAD_CHUNK(connector), [{ now: 0, after: 0, limit: 2000, ...(connector ? { connector: 'a' } : {}) }]).filter((step) => step.startsWith('SEARCH'));
    expect(found(true)).toEqual(['SEARCH outbox_delivery USING INTEGER PRIMARY KEY (rowid=?)', 'SEARCH outbox_delivery USING COVERING INDEX outbox_dead (connector=? AND rowid>?)']);
    expect(found(false)).toEqual(['SEARCH outbox_delivery USING INTEGER PRIMARY KEY (rowid=?)', 'SEARCH outbox_delivery USING INTEGER PRIMARY KEY (rowid>?)']);
  });

  it('lists a chunk of the dead after the last one listed: of a connector by outbox_dead, of all by the sequence', () => {
    const found = (connector: boolean) => steps(LIST_DEAD(connector), [{ after: 0, limit: 2000, ...(connector ? { connector: 'a' } : {}) }]);
    expect(found(true)).toEqual(['SEARCH outbox_delivery USING INDEX outbox_dead (connector=? AND rowid>?)']);
    expect(found(false)).toEqual(['SEARCH outbox_delivery USING INTEGER PRIMARY KEY (rowid>?)']);
  });

  it('searches the inbox a window at a time, both its end and its matches found through inbox_received', () => {
    const cursor = { at: 0, rowid: 0 };
    expect(steps(WINDOW_END, [{ ...cursor, skip: 4999 }])).toEqual(['SEARCH inbox USING COVERING INDEX inbox_received (received_at_ms<?)']);
    expect(steps(WINDOW_MATCHES, [{ ...cursor, endAt: 0, endRowid: 0, patterns: '[]', limit: 20 }]).filter((step) => step.includes('inbox')))
      .toEqual(['SEARCH inbox USING INDEX inbox_received (received_at_ms>? AND received_at_ms<?)']);
  });

  it('counts the outbox per connector and status from its indexes alone', () => {
    const plan = steps(COUNTS);
    expect(plan.filter((step) => step.startsWith('SCAN outbox_delivery'))).toEqual([
      'SCAN outbox_delivery USING COVERING INDEX outbox_ready',
      'SCAN outbox_delivery USING COVERING INDEX outbox_waiting',
      'SCAN outbox_delivery USING COVERING INDEX outbox_dead',
    ]);
  });

  it('pages through due deliveries, those in flight among them, in the ready index alone', () => {
    expect(steps(DUE, ['files', 0, 0, 0, 500])).toEqual([
      'SEARCH d USING COVERING INDEX outbox_ready (connector=? AND run_at>? AND run_at<?)',
    ]);
  });

  it('follows the people a cycle marked by their keys, in the snapshot and in the name index', () => {
    const plan = [...steps(MARKED('students'), ['[1, 2]', 'students']), ...steps(MARKED_GONE('students'), ['students', '[1, 2]'])];
    expect(plan.filter((step) => /^(SCAN|SEARCH) (?!json_each)/.test(step))).toEqual([
      'SEARCH s USING INTEGER PRIMARY KEY (rowid=?)', 'SEARCH p USING PRIMARY KEY (stream=? AND key=?)',
      'SEARCH person USING PRIMARY KEY (stream=? AND key=?)', 'SEARCH s USING INTEGER PRIMARY KEY (rowid=?)',
    ]);
  });

  it("finds a range batch's queued keys by searching the outbox's indexes", () => {
    const plan = steps(QUEUED_KEYS, [{ connector: 'files', keys: '["students:1"]' }]);
    expect(plan.filter((step) => /outbox_delivery/.test(step))).toEqual([
      'SEARCH outbox_delivery USING INDEX outbox_head (connector=? AND order_key=?)',
      'SEARCH outbox_delivery USING COVERING INDEX outbox_waiting (connector=? AND order_key=?)',
    ]);
  });

  it('reads and prunes a part of the delivery log by its index, and asks whether any row is queued by searching the partial indexes', () => {
    expect(steps(NEXT_RECORDS, [3, 0, 32])).toEqual(['SEARCH outbox_log USING INDEX outbox_log_owed (part=? AND seq>?)']);
    expect(steps(PRUNE, [{ part: 3, after: 0, to: 10, alone: '["files"]' }]).filter((step) => /outbox_log /.test(step) || step.startsWith('SEARCH outbox_log'))).toEqual([
      'SEARCH outbox_log USING COVERING INDEX outbox_log_owed (part=? AND seq>? AND seq<?)',
    ]);
    expect(steps(ROWS_QUEUED, [{ connector: 'files' }]).filter((step) => /outbox_delivery/.test(step))).toEqual([
      'SEARCH outbox_delivery USING INDEX outbox_head (connector=?)',
      'SEARCH outbox_delivery USING COVERING INDEX outbox_waiting (connector=?)',
    ]);
  });

  it("counts what a part of the delivery log owes from indexes alone, without reading a record's text", () => {
    expect(steps(OWED_COUNTS, [3])).toEqual(['SCAN c', 'SEARCH l USING COVERING INDEX outbox_log_owed (part=? AND seq>?)']);
    expect(steps(MADE_ROWS, [3])).toEqual(['SCAN c', 'SEARCH d USING COVERING INDEX outbox_log_made (connector=? AND log_part=? AND log_seq>?)']);
  });

  it("lists a part's owed records in log order from its index, so that a limit stops the read", () => {
    const reads = (plan: string[]) => plan.filter((step) => /^(SCAN|SEARCH|USE TEMP) (c|l)\b|^USE TEMP/.test(step));
    expect(reads(steps(OWED_OF_PART, [{ connector: 'a', part: 1, to: 5, limit: 50 }]))).toEqual([
      'SEARCH c USING PRIMARY KEY (connector=? AND part=?)', 'SEARCH l USING INDEX outbox_log_owed (part=? AND seq>? AND seq<?)',
    ]);
  });

  it("finds a key's owed records through the index of order keys, not by reading its part", () => {
    const reads = (plan: string[]) => plan.filter((step) => /^(SCAN|SEARCH|USE TEMP) (c|l)\b|^USE TEMP/.test(step));
    expect(reads(steps(OWED_OF_KEY, [{ connector: 'a', part: 1, key: 'events:1' }]))).toEqual([
      'SEARCH c USING PRIMARY KEY (connector=? AND part=?)', 'SEARCH l USING INDEX outbox_log_key (order_key=? AND rowid>?)',
    ]);
  });

  it('finds an owed record by its delivery id through the index of record ids, whatever its part', () => {
    const reads = steps(OWED_OF_ID, [{ connector: 'a', recordId: 'events:invoice.created:1:abc' }]).filter((step) => /^(SCAN|SEARCH) (c|l)\b/.test(step));
    expect(reads).toEqual(['SEARCH l USING INDEX outbox_log_record (record_id=?)', 'SEARCH c USING PRIMARY KEY (connector=? AND part=?)']);
  });
});
