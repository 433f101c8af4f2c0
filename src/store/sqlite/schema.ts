import type Database from 'better-sqlite3';
import { BridgeError } from '../../errors.js';
import { pragma, pragmaValue } from './handles.js';
import { migrateStreams } from './stream-tables.js';

/**
 * The SQLite schema, one migration per version (`PRAGMA user_version` holds the last one applied),
 * then each polled stream's tables, a migration of their own per stream (stream-tables.ts). The
 * layout is the PostgreSQL one (postgres/schema.ts) in SQLite's types; docs/store.md explains it.
 */

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE inbox (
    id TEXT PRIMARY KEY, event TEXT NOT NULL, received_at TEXT NOT NULL, received_at_ms INTEGER NOT NULL,
    body TEXT NOT NULL, record_ids TEXT NOT NULL, reprocessed INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX inbox_received ON inbox (received_at_ms);
  CREATE TABLE quarantine (
    id TEXT PRIMARY KEY, event TEXT NOT NULL, reason TEXT NOT NULL, signed_at INTEGER NOT NULL,
    received_at TEXT NOT NULL, body TEXT NOT NULL);

  CREATE TABLE outbox_record (
    id TEXT PRIMARY KEY, body TEXT, pending INTEGER NOT NULL,
    snapshot_stream TEXT, snapshot_key INTEGER, snapshot_chain TEXT, detected_at TEXT, record_text TEXT,
    CHECK (body IS NOT NULL OR snapshot_key IS NOT NULL));
  CREATE INDEX outbox_record_lazy ON outbox_record (snapshot_stream, snapshot_key) WHERE body IS NULL AND record_text IS NULL;
  CREATE TABLE outbox_delivery (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, connector TEXT NOT NULL, record_id TEXT NOT NULL,
    stream TEXT NOT NULL, order_key TEXT NOT NULL, status TEXT NOT NULL,
    enqueued_at INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT, last_attempt_at INTEGER, lease_owner TEXT, lease_until INTEGER, fence INTEGER NOT NULL DEFAULT 0);
  CREATE UNIQUE INDEX outbox_head ON outbox_delivery (connector, order_key) WHERE status IN ('pending', 'active', 'dead');
  CREATE INDEX outbox_ready ON outbox_delivery (connector, run_at, seq) WHERE status = 'pending';
  CREATE INDEX outbox_waiting ON outbox_delivery (connector, order_key, seq) WHERE status = 'blocked';

  CREATE TABLE outbox_range (
    connector TEXT NOT NULL, stream TEXT NOT NULL, detected_at TEXT NOT NULL, after INTEGER, upto INTEGER NOT NULL,
    remaining INTEGER NOT NULL, enqueued_at INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT, last_attempt_at INTEGER,
    PRIMARY KEY (connector, stream));
  CREATE TABLE snapshot_meta (stream TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0, rows INTEGER NOT NULL DEFAULT 0,
    staged INTEGER NOT NULL DEFAULT 0);

  CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE replica (
    id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, started_at INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL, url TEXT);
  `,
  // The operator console: each delivery attempt (found by record id, and by a person's records as
  // a prefix of it), the poll cycles and roster exports, counts per hour (each replica its own
  // rows), and the names of the people in the snapshot with how far their index has come.
  `
  CREATE TABLE delivery_attempt (
    seq INTEGER PRIMARY KEY, record_id TEXT NOT NULL, connector TEXT NOT NULL, enqueued_at INTEGER NOT NULL, at INTEGER NOT NULL,
    outcome TEXT NOT NULL, http_status INTEGER, duration_ms INTEGER, error TEXT);
  CREATE INDEX delivery_attempt_record ON delivery_attempt (record_id);
  CREATE TABLE run (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, trigger TEXT NOT NULL, started_at INTEGER NOT NULL, duration_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL, reason TEXT, message TEXT, counts TEXT NOT NULL, replica TEXT);
  CREATE TABLE tally (
    kind TEXT NOT NULL, hour INTEGER NOT NULL, label TEXT NOT NULL, replica TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (kind, hour, label, replica)) WITHOUT ROWID;
  CREATE TABLE person (
    stream TEXT NOT NULL, key INTEGER NOT NULL, chain TEXT NOT NULL, user_id INTEGER, name TEXT NOT NULL, email TEXT, search TEXT NOT NULL,
    PRIMARY KEY (stream, key)) WITHOUT ROWID;
  CREATE TABLE person_meta (stream TEXT PRIMARY KEY, version INTEGER, pass_version INTEGER, after INTEGER);
  `,
  // Streams of any key type: the columns that hold a snapshot key beside other streams' keys have no
  // type, so SQLite keeps each value as it is given (an INTEGER column would turn the text key
  // "0123" into the number 123). The snapshot tables move to migrations of their own per stream.
  `
  CREATE TABLE stream_migration (stream TEXT PRIMARY KEY, version INTEGER NOT NULL);
  CREATE TABLE outbox_record_v3 (
    id TEXT PRIMARY KEY, body TEXT, pending INTEGER NOT NULL,
    snapshot_stream TEXT, snapshot_key, snapshot_chain TEXT, detected_at TEXT, record_text TEXT,
    CHECK (body IS NOT NULL OR snapshot_key IS NOT NULL));
  INSERT INTO outbox_record_v3 SELECT id, body, pending, snapshot_stream, snapshot_key, snapshot_chain, detected_at, record_text FROM outbox_record;
  DROP TABLE outbox_record;
  ALTER TABLE outbox_record_v3 RENAME TO outbox_record;
  CREATE INDEX outbox_record_lazy ON outbox_record (snapshot_stream, snapshot_key) WHERE body IS NULL AND record_text IS NULL;
  CREATE TABLE outbox_range_v3 (
    connector TEXT NOT NULL, stream TEXT NOT NULL, detected_at TEXT NOT NULL, after, upto NOT NULL,
    remaining INTEGER NOT NULL, enqueued_at INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT, last_attempt_at INTEGER,
    PRIMARY KEY (connector, stream));
  INSERT INTO outbox_range_v3 SELECT connector, stream, detected_at, after, upto, remaining, enqueued_at, run_at, attempts, last_error, last_attempt_at FROM outbox_range;
  DROP TABLE outbox_range;
  ALTER TABLE outbox_range_v3 RENAME TO outbox_range;
  `,
  // A record's text in each of its deliveries: claiming, settling and enqueueing it then touch one
  // row, not two. outbox_record keeps the created changes made from snapshot rows (which have no text
  // of their own yet) and the records of deliveries enqueued before this version.
  `
  ALTER TABLE outbox_delivery ADD COLUMN body TEXT;
  `,
  // A first cycle's created changes of a stream owed in parts of disjoint keys (range-parts.ts), each
  // with its own cursor and lease; a range written before is part 0, over all of its keys.
  `
  CREATE TABLE outbox_range_v5 (
    connector TEXT NOT NULL, stream TEXT NOT NULL, part INTEGER NOT NULL, detected_at TEXT NOT NULL, after, upto NOT NULL,
    remaining INTEGER NOT NULL, enqueued_at INTEGER NOT NULL, run_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT, last_attempt_at INTEGER,
    PRIMARY KEY (connector, stream, part));
  INSERT INTO outbox_range_v5 SELECT connector, stream, 0, detected_at, after, upto, remaining, enqueued_at, run_at, attempts, last_error, last_attempt_at FROM outbox_range;
  DROP TABLE outbox_range;
  ALTER TABLE outbox_range_v5 RENAME TO outbox_range;
  `,
  // The dead deliveries per connector, counted from an index like the pending and the waiting ones
  // (outbox.ts, counts): a count read from the rows reads every queued record's text.
  `
  CREATE INDEX outbox_dead ON outbox_delivery (connector) WHERE status = 'dead';
  `,
  // The people a cycle changed while the name index was caught up (people.ts): the index follows
  // them alone instead of walking the whole snapshot again.
  `
  CREATE TABLE person_dirty (stream TEXT NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (stream, key)) WITHOUT ROWID;
  `,
  // The delivery log (log.ts): a webhook's records once each, in parts by order key, and per
  // connector and part a cursor. AUTOINCREMENT: a number is never given twice, or a cursor past a
  // pruned record would pass a new one that took its number.
  `
  CREATE TABLE outbox_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, part INTEGER NOT NULL, record_id TEXT NOT NULL, stream TEXT NOT NULL, order_key TEXT NOT NULL,
    connectors TEXT NOT NULL, body TEXT NOT NULL, enqueued_at INTEGER NOT NULL);
  CREATE INDEX outbox_log_part ON outbox_log (part, seq);
  CREATE TABLE outbox_log_cursor (connector TEXT NOT NULL, part INTEGER NOT NULL, after INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (connector, part)) WITHOUT ROWID;
  `,
  // What the log owes, counted from indexes alone (log.ts, owedCounts): its records' connectors in
  // the index of each part, and on a delivery row made of a log record (a failed one, or one whose
  // key waits behind a row) the record's place in the log. The rows made before get theirs here,
  // through an index on record ids that is dropped again.
  `
  ALTER TABLE outbox_delivery ADD COLUMN log_part INTEGER;
  ALTER TABLE outbox_delivery ADD COLUMN log_seq INTEGER;
  CREATE INDEX outbox_log_owed ON outbox_log (part, seq, connectors);
  DROP INDEX outbox_log_part;
  CREATE INDEX outbox_log_record ON outbox_log (record_id);
  UPDATE outbox_delivery SET (log_part, log_seq) = (SELECT l.part, l.seq FROM outbox_log l WHERE l.record_id = outbox_delivery.record_id ORDER BY l.seq DESC LIMIT 1)
    WHERE EXISTS (SELECT 1 FROM outbox_log l WHERE l.record_id = outbox_delivery.record_id);
  DROP INDEX outbox_log_record;
  CREATE INDEX outbox_log_made ON outbox_delivery (connector, log_part, log_seq) WHERE log_seq IS NOT NULL;
  `,
  // A log record by its id (log.ts, OWED_OF_ID): a delivery id names a connector and a record but
  // no part, and without this a lookup by id read every record owed, on the thread that commits
  // the webhooks.
  `
  CREATE INDEX outbox_log_record ON outbox_log (record_id);
  `,
  // A key's log records (log.ts, OWED_OF_KEY): the console looks an event's deliveries up by its
  // records' keys, and without this a lookup read every record owed in the key's part, on the
  // thread that commits the webhooks. A key's records are in index order (seq is the rowid).
  `
  CREATE INDEX outbox_log_key ON outbox_log (order_key);
  `,
  // The chain each deleted key left (snapshot.ts, applyChanges): a key created again later is a
  // change of its own, not its first created change repeated (docs/records.md, "Record ids").
  `
  CREATE TABLE snapshot_gone (stream TEXT NOT NULL, key TEXT NOT NULL, chain TEXT NOT NULL, PRIMARY KEY (stream, key)) WITHOUT ROWID;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The version that gave rows made of log records their place in the log (tests: the upgrade to it). */
export const LOG_PLACES_VERSION = MIGRATIONS.findIndex((migration) => migration.includes('ADD COLUMN log_part')) + 1;

/**
 * Brings the database to SCHEMA_VERSION, then its streams' tables; a newer database (a downgrade) is
 * refused. `upTo` stops at an older version, with no stream tables (tests: a database as an older
 * schoolbridge left it).
 */
export function migrate(db: Database.Database, upTo = SCHEMA_VERSION): void {
  const current = pragmaValue(db, 'user_version') as number;
  if (current > SCHEMA_VERSION) {
    throw new BridgeError(
      'store.schema_newer',
      `the store's schema is version ${current}, newer than this schoolbridge knows (${SCHEMA_VERSION}): run the version that wrote it`,
    );
  }
  for (let version = current; version < upTo; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      pragma(db, `user_version = ${version + 1}`);
    })();
  }
  if (upTo === SCHEMA_VERSION) migrateStreams(db);
}
