import type pg from 'pg';
import { BridgeError } from '../../errors.js';
import { migrateStreams } from './stream-tables.js';

/**
 * The PostgreSQL schema: everything in the schema `schoolbridge`, one migration per version, then
 * each polled stream's tables, a migration of their own per stream (stream-tables.ts), all applied at
 * start-up inside one transaction that holds an advisory lock, so replicas starting at once apply
 * each migration exactly once and start on the same schema.
 */
export const SCHEMA = 'schoolbridge';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE inbox (
    id text PRIMARY KEY, event text NOT NULL, received_at text NOT NULL, received_at_ms bigint NOT NULL,
    body text NOT NULL, record_ids text NOT NULL, reprocessed integer NOT NULL DEFAULT 0);
  CREATE INDEX inbox_received ON inbox (received_at_ms);
  CREATE TABLE quarantine (
    id text PRIMARY KEY, event text NOT NULL, reason text NOT NULL, signed_at bigint NOT NULL,
    received_at text NOT NULL, body text NOT NULL);

  CREATE TABLE outbox_record (
    id text PRIMARY KEY, body text, pending integer NOT NULL,
    snapshot_stream text, snapshot_key bigint, snapshot_chain text, detected_at text, record_text text,
    CHECK (body IS NOT NULL OR snapshot_key IS NOT NULL));
  CREATE INDEX outbox_record_lazy ON outbox_record (snapshot_stream, snapshot_key) WHERE body IS NULL AND record_text IS NULL;
  CREATE TABLE outbox_delivery (
    seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, connector text NOT NULL, record_id text NOT NULL,
    stream text NOT NULL, order_key text NOT NULL, status text NOT NULL,
    enqueued_at bigint NOT NULL, run_at bigint NOT NULL, attempts integer NOT NULL DEFAULT 0,
    last_error text, last_attempt_at bigint, lease_owner text, lease_until bigint, fence bigint NOT NULL DEFAULT 0)
    -- Room in each page for a claim's new row version beside the old (a HOT update).
    WITH (fillfactor = 80);
  CREATE UNIQUE INDEX outbox_head ON outbox_delivery (connector, order_key) WHERE status IN ('pending', 'dead');
  CREATE INDEX outbox_ready ON outbox_delivery (connector, run_at, seq) WHERE status = 'pending';
  CREATE INDEX outbox_waiting ON outbox_delivery (connector, order_key, seq) WHERE status = 'blocked';

  CREATE TABLE outbox_range (
    connector text NOT NULL, stream text NOT NULL, detected_at text NOT NULL, after bigint, upto bigint NOT NULL,
    remaining bigint NOT NULL, enqueued_at bigint NOT NULL, run_at bigint NOT NULL, attempts integer NOT NULL DEFAULT 0,
    last_error text, last_attempt_at bigint, claimed_to bigint, claimed_count bigint,
    lease_owner text, lease_until bigint, fence bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (connector, stream));
  CREATE TABLE snapshot_meta (stream text PRIMARY KEY, version bigint NOT NULL DEFAULT 0, rows bigint NOT NULL DEFAULT 0);

  CREATE TABLE state (key text PRIMARY KEY, value text NOT NULL);
  CREATE TABLE replica (
    id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL, started_at bigint NOT NULL,
    heartbeat_at bigint NOT NULL, url text);
  `,
  // Replicas: roles one replica holds at a time, the last tick claimed per scheduled job, and a fence
  // per stream that each cycle's staging takes, so that an older cycle cannot apply over a newer one.
  `
  CREATE TABLE role (name text PRIMARY KEY, holder text NOT NULL, since bigint NOT NULL, fence bigint NOT NULL);
  CREATE TABLE tick (job text PRIMARY KEY, slot bigint NOT NULL, replica text NOT NULL, claimed_at bigint NOT NULL);
  ALTER TABLE snapshot_meta ADD COLUMN stage_fence bigint NOT NULL DEFAULT 0;
  `,
  // The operator console (sqlite/schema.ts says what each table holds). Record ids sort bytewise
  // ("C"), so that every record of a person is a range of the index (`students:123:` and on).
  `
  CREATE TABLE delivery_attempt (
    seq bigserial PRIMARY KEY, record_id text COLLATE "C" NOT NULL, connector text NOT NULL, enqueued_at bigint NOT NULL, at bigint NOT NULL,
    outcome text NOT NULL, http_status integer, duration_ms integer, error text);
  CREATE INDEX delivery_attempt_record ON delivery_attempt (record_id);
  CREATE TABLE run (
    id bigserial PRIMARY KEY, kind text NOT NULL, trigger text NOT NULL, started_at bigint NOT NULL, duration_ms bigint NOT NULL,
    outcome text NOT NULL, reason text, message text, counts text NOT NULL, replica text);
  CREATE TABLE tally (
    kind text NOT NULL, hour bigint NOT NULL, label text NOT NULL, replica text NOT NULL, n bigint NOT NULL,
    PRIMARY KEY (kind, hour, label, replica));
  CREATE TABLE person (
    stream text NOT NULL, key bigint NOT NULL, chain text NOT NULL, user_id bigint, name text NOT NULL, email text, search text NOT NULL,
    PRIMARY KEY (stream, key));
  CREATE TABLE person_meta (stream text PRIMARY KEY, version bigint, pass_version bigint, after bigint);
  `,
  // Streams of any key type. A column that holds a snapshot key beside other streams' keys gets a
  // text twin for the streams whose keys are strings (stream-tables.ts); the integer columns stay as
  // they are, so that a replica of an older version goes on working beside newer ones. The snapshot
  // tables move to migrations of their own per stream.
  `
  CREATE TABLE stream_migration (stream text PRIMARY KEY, version integer NOT NULL);
  ALTER TABLE outbox_record ADD COLUMN snapshot_text_key text COLLATE "C",
    DROP CONSTRAINT outbox_record_check,
    ADD CONSTRAINT outbox_record_check CHECK (body IS NOT NULL OR snapshot_key IS NOT NULL OR snapshot_text_key IS NOT NULL);
  CREATE INDEX outbox_record_lazy_text ON outbox_record (snapshot_stream, snapshot_text_key) WHERE body IS NULL AND record_text IS NULL AND snapshot_text_key IS NOT NULL;
  ALTER TABLE outbox_range ADD COLUMN after_text text COLLATE "C", ADD COLUMN upto_text text COLLATE "C", ADD COLUMN claimed_to_text text COLLATE "C",
    ALTER COLUMN upto DROP NOT NULL;
  `,
  // Records whose last delivery was done stayed behind (a settlement's DELETE named the row its own
  // UPDATE had lowered to 0, which deletes nothing): they go.
  `
  DELETE FROM outbox_record WHERE pending <= 0;
  `,
  // A first cycle's created changes of a stream owed in parts of disjoint keys (range-parts.ts), each
  // with its own cursor and lease; a range written before is part 0, over all of its keys.
  `
  ALTER TABLE outbox_range ADD COLUMN part integer NOT NULL DEFAULT 0;
  ALTER TABLE outbox_range DROP CONSTRAINT outbox_range_pkey, ADD PRIMARY KEY (connector, stream, part);
  `,
  // The people a cycle changed while the name index was caught up (people.ts): the index follows
  // them alone instead of walking the whole snapshot again.
  `
  CREATE TABLE person_dirty (stream text NOT NULL, key bigint NOT NULL, PRIMARY KEY (stream, key));
  `,
  // The delivery log (log.ts): a webhook's records once each, in parts by order key, numbered from
  // the deliveries' sequence in commit order (the append takes `outbox_log_head`'s row lock), and
  // per connector and part a cursor with the lease of the batch in flight.
  `
  CREATE TABLE outbox_log (
    part integer NOT NULL, seq bigint NOT NULL, record_id text NOT NULL, stream text NOT NULL, order_key text NOT NULL,
    connectors text[] NOT NULL, body text NOT NULL, enqueued_at bigint NOT NULL,
    PRIMARY KEY (part, seq));
  CREATE TABLE outbox_log_head (id integer PRIMARY KEY, appends bigint NOT NULL);
  INSERT INTO outbox_log_head (id, appends) VALUES (0, 0);
  CREATE TABLE outbox_log_cursor (
    connector text NOT NULL, part integer NOT NULL, after bigint NOT NULL DEFAULT 0, claimed_to bigint,
    lease_owner text, lease_until bigint, fence bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (connector, part));
  `,
  // The chain each deleted key left (snapshot.ts, applyChanges): a key created again later is a
  // change of its own, not its first created change repeated (docs/records.md, "Record ids").
  `
  CREATE TABLE snapshot_gone (stream text NOT NULL, key text NOT NULL, chain text NOT NULL, PRIMARY KEY (stream, key));
  `,
  // Records whose connectors settled their last deliveries at the same moment stayed behind at 0
  // (outbox.ts, settle: each saw the other's count before it): they go.
  `
  DELETE FROM outbox_record WHERE pending <= 0;
  `,
  // When the run of a claimed tick ended (roles.ts): a tick whose claimer died before it is run by
  // another replica; one that ended is not run twice.
  `
  ALTER TABLE tick ADD COLUMN done_at bigint;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to SCHEMA_VERSION, then its streams' tables; safe when several processes start
 * at once. `upTo` stops at an older version, with no stream tables (tests: a database as an older
 * schoolbridge left it).
 */
export async function migrate(pool: pg.Pool, upTo = SCHEMA_VERSION): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Held until COMMIT: a second starter waits here, then finds the migrations applied.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('schoolbridge.migrate'))`);
    // Not CREATE SCHEMA IF NOT EXISTS: it needs the right to create in the database even when the
    // schema is there, and a role given a schema of its own (and nothing more) must be able to start.
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [SCHEMA]);
    if (!rowCount) await client.query(`CREATE SCHEMA ${SCHEMA}`);
    await client.query(`SET LOCAL search_path TO ${SCHEMA}`);
    await client.query('CREATE TABLE IF NOT EXISTS migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM migrations');
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new BridgeError('store.schema_newer', `the database's schema is version ${current}, newer than this schoolbridge knows (${SCHEMA_VERSION}): run the version that wrote it`);
    }
    for (let version = current; version < upTo; version++) {
      await client.query(MIGRATIONS[version]!);
      await client.query('INSERT INTO migrations (version) VALUES ($1)', [version + 1]);
    }
    if (upTo === SCHEMA_VERSION) await migrateStreams(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
