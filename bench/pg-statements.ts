import pg from 'pg';

/** What PostgreSQL must be started with for `pgStatements` (test/support/postgres.ts `flags`). */
export const PG_STATEMENTS_FLAGS = ['-c', 'shared_preload_libraries=pg_stat_statements'];

export interface PgStatements {
  /** Forgets what was counted so far: the next report covers only what runs after. */
  reset(): Promise<void>;
  /**
   * Prints the daemon's statements that took the most of PostgreSQL's time since the last reset
   * (execution time, buffer pages touched, WAL written), divided by `per.count` `per.unit`.
   */
  print(per: { count: number; unit: string }, indent?: string): Promise<void>;
  close(): Promise<void>;
}

/** A connection that reads `pg_stat_statements` of the database at `url` (the server needs PG_STATEMENTS_FLAGS). */
export async function pgStatements(url: string, top = 6): Promise<PgStatements> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const database = `(SELECT oid FROM pg_database WHERE datname = current_database())`;
  return {
    async reset() {
      await client.query(`SELECT pg_stat_statements_reset(0, ${database}, 0)`);
    },
    async print(per, indent = '  ') {
      const { rows } = await client.query<{ calls: string; ms: number; rows: string; hits: string; wal: string; query: string }>(`SELECT calls, total_exec_time AS ms, rows,
          shared_blks_hit + shared_blks_read AS hits, wal_bytes AS wal, regexp_replace(query, '\\s+', ' ', 'g') AS query
        FROM pg_stat_statements WHERE dbid = ${database}
          AND query NOT LIKE 'CREATE EXTENSION%' AND query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT ${top}`);
      process.stdout.write(`${indent}PostgreSQL's time per statement (pg_stat_statements, per ${per.unit} of ${per.count}):\n`);
      // Buffer pages read or found in memory, each time a statement touched one: what its index work costs.
      for (const row of rows) {
        const each = (row.ms * 1000) / per.count;
        process.stdout.write(`${indent}  ${each.toFixed(1).padStart(6)} µs, ${row.calls.padStart(7)} calls, ${row.rows.padStart(7)} rows, ${(Number(row.hits) / per.count).toFixed(1).padStart(5)} pages and ${(Number(row.wal) / per.count).toFixed(0).padStart(5)} bytes of WAL  ${row.query.slice(0, 90)}\n`);
      }
    },
    close: () => client.end(),
  };
}
