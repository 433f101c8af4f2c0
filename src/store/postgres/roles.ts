import type { RoleHolding, RoleStore, TickClaim } from '../port.js';
import { REPLICA_TTL_MS } from '../tables.js';
import type { Db } from './db.js';

/**
 * Roles and ticks on PostgreSQL (the port's RoleStore). A role row names its holder; it changes
 * hands only when the holder is not live (no heartbeat in the replica table for REPLICA_TTL_MS, or
 * gone: a replica that stops deletes its row) or gave it up (holder ''), and its fence goes up when
 * it does. Rows stay, so a fence never goes back. A tick row holds the last slot claimed per job:
 * claiming moves it forward, so one claimer wins each slot, unless the winner is no longer live
 * (it may have died before it ran the slot's job): then the slot may be claimed again.
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
 * A slot another replica claimed is given again only when that one stopped (its row gone) or is
 * found dead: no heartbeat and no claim of its own for REPLICA_TTL_MS. A claim just made counts as
 * a sign of life: after an outage of the database every heartbeat is old, and the replicas coming
 * back would each take the same tick from the other.
 */
const CLAIM_TICK = `
  INSERT INTO tick (job, slot, replica, claimed_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (job) DO UPDATE SET slot = excluded.slot, replica = excluded.replica, claimed_at = excluded.claimed_at
    WHERE tick.slot < excluded.slot
      OR (tick.slot = excluded.slot AND tick.replica <> excluded.replica
        AND NOT EXISTS (SELECT 1 FROM replica r WHERE r.id = tick.replica AND (r.heartbeat_at > $5 OR tick.claimed_at > $5)))
  RETURNING replica`;

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
    claimTick: (job, slot, now) => run(async (db) => (await db.query(CLAIM_TICK, [job, slot, replicaId, now, now - REPLICA_TTL_MS])).rows.length > 0),
    holdings: (now) => run(async (db) => {
      const roles = await db.query<{ name: string; holder: string; since: number; fence: number }>(
        `SELECT name, holder, since, fence FROM role WHERE holder IN (SELECT id FROM replica WHERE heartbeat_at > $1) ORDER BY name`, [now - REPLICA_TTL_MS]);
      const ticks = await db.query<{ job: string; slot: number; replica: string; claimed_at: number }>('SELECT * FROM tick ORDER BY job');
      return {
        roles: roles.rows.map((r): RoleHolding => ({ role: r.name, holder: r.holder, since: r.since, fence: r.fence })),
        ticks: ticks.rows.map((t): TickClaim => ({ job: t.job, slot: t.slot, replica: t.replica, claimedAt: t.claimed_at })),
      };
    }),
  };
}

/** A replica that leaves gives up its roles with it; the others are told. */
export async function releaseAll(db: Db, replicaId: string): Promise<void> {
  const { rowCount } = await db.query(`UPDATE role SET holder = '' WHERE holder = $1`, [replicaId]);
  if (rowCount) db.tell('roles');
}
