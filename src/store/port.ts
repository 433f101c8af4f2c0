import type { Component } from '../lifecycle.js';
import type { HistoryStore, PeopleStore } from './history-port.js';
import type { InboxStore } from './port-inbox.js';
import type { OutboxStore } from './port-outbox.js';
import type { SnapshotStore } from './port-snapshot.js';
import type { ReplicaStore, RoleStore, StateStore, StoreChange } from './port-state.js';

export type * from './history-port.js';
export type * from './port-inbox.js';
export type * from './port-outbox.js';
export type * from './port-snapshot.js';
export type * from './port-state.js';

/**
 * The store port (docs/store.md): everything schoolbridge keeps, shaped by the domain — the webhook
 * inbox, the outbox, the poll snapshot, small state and the live replicas — with two engines behind
 * it, SQLite (embedded) and PostgreSQL (shared). Every method is one transaction: what it writes is
 * durable when its promise resolves, or none of it is written. The modules above never learn which
 * engine runs.
 */
export interface Store extends Component {
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Whether several processes use this store at once (replicas on PostgreSQL): then the store
   * arbitrates roles and schedule ticks between them, and tells each what the others changed.
   */
  readonly shared: boolean;
  /** This process among the replicas (leases and roles carry it). */
  readonly replicaId: string;
  readonly inbox: InboxStore;
  readonly outbox: OutboxStore;
  readonly snapshot: SnapshotStore;
  readonly state: StateStore;
  readonly replicas: ReplicaStore;
  readonly roles: RoleStore;
  /** Attempts, runs and counts per hour, for the operator console. */
  readonly history: HistoryStore;
  /** The names of the people in the snapshot, for the operator console. */
  readonly people: PeopleStore;
  /**
   * Told when another process changed what this one may act on: deliveries became due (`outbox`),
   * a role was given up (`roles`). Only a shared store tells anything; a listener must still look
   * by itself now and then, as a notice can be lost while the database is unreachable.
   */
  watch(listener: (change: StoreChange) => void): () => void;
  /**
   * Whether this replica's leases still stand at `now`: on a shared store the others reclaim them
   * once its heartbeat is REPLICA_TTL_MS old, so from OWN_LEASES_MS after its last heartbeat it
   * starts no delivery (outbox/lease-guard.ts). Always, on a store only this process opens.
   */
  leasesStand(now: number): boolean;
  /** Whether the last write succeeded; a store that cannot write says why, and heals by itself. */
  health(): StoreHealth;
  /** Told when health changes (the intake's 503s, /readyz). */
  onHealth(listener: (health: StoreHealth) => void): () => void;
  /**
   * Where this replica's HTTP server (and admin API) answers, for the CLI and the other replicas;
   * and its embedded sandbox, if it runs one, for the CLI beside it.
   */
  advertise(url: string, sandboxUrl?: string): Promise<void>;
}

export type StoreHealth = { ok: true } | { ok: false; reason: string; since: number };
