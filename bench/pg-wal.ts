import pg from 'pg';

/**
 * What the benches warm: more WAL than all of bench:ingest's rounds write, so none of them waits for
 * a new segment. A first poll cycle writes more (docs/sizing.md, "A fresh PostgreSQL's WAL segments").
 */
const WARM_WAL_MB = 256;

/**
 * Brings a fresh PostgreSQL's write-ahead log to where a server that has run a while has it. A new
 * cluster has no old WAL segments to recycle, so each new segment (16 MB) is made by writing a file
 * of zeros and syncing it (`wal_init_zero`), and every commit waits meanwhile: a bench on a fresh
 * server would measure that, once per 16 MB of WAL, and not the daemon. A server that has
 * checkpointed renames segments it no longer needs into the next ones instead, keeping about as
 * many as it saw written between its last checkpoints. So WARM_WAL_MB of WAL are written (a table
 * made and dropped) and checkpointed before anything is measured. Gives the line a bench prints:
 * how long that took and how many segment files are ready ahead of the one in use.
 */
export async function warmWal(url: string): Promise<string> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Rows of about 1 kB, stored as they are (under the size at which PostgreSQL compresses a value).
    await client.query(`CREATE TABLE bench_wal_warmup AS SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, ${WARM_WAL_MB * 1000}) g`);
    await client.query('DROP TABLE bench_wal_warmup');
    await client.query('CHECKPOINT');
    const { rows } = await client.query<{ ahead: number }>(
      `SELECT count(*)::int AS ahead FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' AND name > pg_walfile_name(pg_current_wal_lsn())`);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    return `PostgreSQL's WAL warmed as on a server that has run a while: ${WARM_WAL_MB} MB written and checkpointed in ${seconds} s, ${rows[0]!.ahead} segment files ready for reuse`;
  } finally {
    await client.end();
  }
}

