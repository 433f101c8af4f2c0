import type { RoleHolding, RoleStore, TickClaim } from '../port.js';
import { REPLICA_TTL_MS } from '../tables.js';
import type { Db } from './db.js';

/**
 * Roles and ticks on PostgreSQL (the port's RoleStore). A role row names its holder; it changes
 * hands only when the holder is not live (no heartbeat in the replica table for REPLICA_TTL_MS, or
 * gone: a replica that stops deletes its row) or gave it up (holder ''), and its fence goes up when
 * it does. Rows stay, so a fence never goes back. A tick row holds the last slot claimed per job:
 * claiming moves it forward, so one claimer wins each slot, unless the winner is no longer live
 * before it noted the run's end (it died mid-run, or before it ran): then the slot may be claimed again.
 */
const ACQUIRE = `
  WITH taken AS (
    INSERT INTO role (name, holder, since, fence) VALUES ($1, $2, $3, 1)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, since = excluded.since, fence = role.fence + 1
      WHERE role.holder <> excluded.holder
        AND NOT EXISTS (SELECT 1 FROM replica r WHERE r.id = role.holder AND r.heartbeat_at > $4)
        AND ($5 OR NOT EXISTS (SELECT 1 FROM replica r WHERE r.id = role.holder))
    RETURNING fence)
  SELECT fence FROM taken
  UNION ALL SELECT fence FROM role WHERE name = $1 AND holder = $2 AND NOT EXISTS (SELECT 1 FROM taken)`;

/**
 * A slot another replica claimed is given again only while its run has not ended (done_at) and that
 * one stopped (its row gone) or is found dead: no heartbeat and no claim of its own for
 * REPLICA_TTL_MS. A claim just made counts as a sign of life: after an outage of the database every
 * heartbeat is old, and the replicas coming back would each take the same tick from the other.
 */
const CLAIM_TICK = `
  INSERT INTO tick (job, slot, replica, claimed_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, replica = excluded.replica, claimed_at = excluded.claimed_at, done_at = NULL
    WHERE tick.slot < excluded.slot
      OR (tick.slot = excluded.slot AND tick.replica <> excluded.replica AND tick.done_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM replica r WHERE r.id = tick.replica AND (r.heartbeat_at > $5 OR tick.claimed_at > $5)))
  RETURNING replica`;

/** A claim refused: whether the slot's run may still need a replica (`taken`) or not (`settled`). */
const TICK_STATE = `SELECT slot, done_at FROM tick WHERE job = $1`;

/**
 * `mayTakeStale(now)`: whether this replica may take a role from a holder whose heartbeat is old
 * (one that gave it up, or stopped, it may always take). Not until it has itself reached the database
 * for REPLICA_TTL_MS: after an outage of the database every heartbeat is old, and the holder, back
 * too, has not had the time to beat; the role would change hands, and for a moment two replicas
 * would write one spreadsheet or ledger.
 */
export function createPgRoles(replicaId: string, run: <T>(work: (db: Db) => Promise<T>) => Promise<T>, mayTakeStale: (now: number) => boolean = () => true): RoleStore {
  return {
    acquire: (role, now) => run(async (db) => {
      const { rows } = await db.query<{ fence: number }>(ACQUIRE, [role, replicaId, now, now - REPLICA_TTL_MS, mayTakeStale(now)]);
      return rows[0]?.fence;
    }),
    release: (role) => run(async (db) => {
      const { rowCount } = await db.query(`UPDATE role SET holder = '' WHERE name = $1 AND holder = $2`, [role, replicaId]);
      if (rowCount) db.tell('roles');
    }),
    claimTick: (job, slot, now) => run(async (db) => {
      if ((await db.query(CLAIM_TICK, [job, slot, replicaId, now, now - REPLICA_TTL_MS])).rows.length > 0) return 'mine';
      const { rows } = await db.query<{ slot: number; done_at: number | null }>(TICK_STATE, [job]);
      const last = rows[0];
      return last && last.slot === slot && last.done_at === null ? 'taken' : 'settled';
    }),
    finishTick: (job, slot, now) => run(async (db) => {
      await db.query('UPDATE tick SET done_at = $4 WHERE job = $1 AND slot = $2 AND replica = $3', [job, slot, replicaId, now]);
    }),
    holdings: (now) => run(async (db) => {
      const roles = await db.query<{ name: string; holder: string; since: number; fence: number }>(
        `SELECT name, holder, since, fence FROM role WHERE holder IN (SELECT id FROM replica WHERE heartbeat_at > $1) ORDER BY name`, [now - REPLICA_TTL_MS]);
      const ticks = await db.query<{ job: string; slot: number; replica: string; claimed_at: number; done_at: number | null }>('SELECT * FROM tick ORDER BY job');
      return {
        roles: roles.rows.map((r): RoleHolding => ({ role: r.name, holder: r.holder, since: r.since, fence: r.fence })),
        ticks: ticks.rows.map((t): TickClaim => ({ job: t.job, slot: t.slot, replica: t.replica, claimedAt: t.claimed_at, ...(t.done_at === null ? {} : { doneAt: t.done_at }) })),
      };
    }),
  };
}

/** A replica that leaves gives up its roles with it; the others are told. */
export async function releaseAll(db: Db, replicaId: string): Promise<void> {
  const { rowCount } = await db.query(`UPDATE role SET holder = '' WHERE holder = $1`, [replicaId]);
  if (rowCount) db.tell('roles');
}
