import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { gauge } from '../metrics.js';
import { REPLICA_TTL_MS, type Store } from '../store/index.js';

/** A live replica as the status page and /status.json show it, with the roles and ticks it holds. */
export interface ReplicaView {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
  /** This process. */
  self: boolean;
  /** Roles it holds now (`connector:files`, `webhooks.reconcile`). */
  roles: string[];
  /** Scheduled jobs whose last tick it ran, with the tick's time (`poll` → ISO). */
  lastTicks: Record<string, string>;
}

type ReplicaSource = Pick<Store, 'replicaId' | 'replicas' | 'roles'>;

/** The live replicas (heartbeat within REPLICA_TTL_MS), this one first; empty while the store cannot answer. */
export async function replicaViews(store: ReplicaSource, now: number): Promise<ReplicaView[]> {
  const [live, holdings] = await Promise.all([store.replicas.live(now - REPLICA_TTL_MS), store.roles.holdings(now)]);
  return live
    .map((replica): ReplicaView => ({
      id: replica.id,
      host: replica.host,
      pid: replica.pid,
      startedAt: new Date(replica.startedAt).toISOString(),
      heartbeatAt: new Date(replica.heartbeatAt).toISOString(),
      self: replica.id === store.replicaId,
      roles: holdings.roles.filter((r) => r.holder === replica.id).map((r) => r.role),
      lastTicks: Object.fromEntries(holdings.ticks.filter((t) => t.replica === replica.id).map((t) => [t.job, new Date(t.slot).toISOString()])),
    }))
    .sort((a, b) => Number(b.self) - Number(a.self) || a.startedAt.localeCompare(b.startedAt));
}

/**
 * `schoolbridge_replicas` (live replicas, as this one sees them) and `schoolbridge_replica_roles`
 * (1 per role this replica holds, labelled with it and the replica's id): which process does what.
 */
export function registerReplicaMetrics(metrics: Registry, store: ReplicaSource, clock: Clock): void {
  gauge(metrics, 'schoolbridge_replicas', 'Live replicas on this store (heartbeat within the last 30 s)', [], async function collect() {
    this.reset();
    const live = await store.replicas.live(clock.now() - REPLICA_TTL_MS).catch(() => undefined);
    if (live) this.set(live.length);
  });
  gauge(metrics, 'schoolbridge_replica_roles', 'Roles this replica holds (connector:<name>, webhooks.reconcile)', ['role', 'replica'], async function collect() {
    this.reset();
    const holdings = await store.roles.holdings(clock.now()).catch(() => undefined);
    for (const role of holdings?.roles ?? []) if (role.holder === store.replicaId) this.set({ role: role.role, replica: store.replicaId }, 1);
  });
}
