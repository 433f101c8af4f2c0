import type { RoleHolding, RoleStore, TickClaim } from './port.js';

/**
 * The roles of a store one process holds alone (SQLite, locked by its process): this process holds
 * every role it asks for and claims every new tick. Kept in memory: nothing outlives the process
 * that all of it belongs to.
 */
export function createLocalRoles(replicaId: string): RoleStore {
  const roles = new Map<string, RoleHolding>();
  const ticks = new Map<string, TickClaim>();
  let fences = 0;
  return {
    async acquire(role, now) {
      let holding = roles.get(role);
      if (!holding) roles.set(role, (holding = { role, holder: replicaId, since: now, fence: (fences += 1) }));
      return holding.fence;
    },
    async release(role) {
      roles.delete(role);
    },
    async claimTick(job, slot, now) {
      const last = ticks.get(job);
      if (last && last.slot >= slot) return 'settled';
      ticks.set(job, { job, slot, replica: replicaId, claimedAt: now });
      return 'mine';
    },
    async finishTick(job, slot, now) {
      const last = ticks.get(job);
      if (last?.slot === slot) last.doneAt = now;
    },
    async holdings() {
      const byName = <T>(entries: Map<string, T>) => [...entries].sort(([a], [b]) => a.localeCompare(b)).map(([, value]) => value);
      return { roles: byName(roles), ticks: byName(ticks) };
    },
  };
}
