/** Small JSON values by key (markers, last runs). `null` deletes. */
export type StatePatch = Record<string, unknown>;

export interface StateStore {
  get<T>(key: string): Promise<T | undefined>;
  put(patch: StatePatch): Promise<void>;
}

export interface Replica {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  heartbeatAt: number;
  url?: string;
}

export type StoreChange = 'outbox' | 'roles';

/** A role held by a live replica: `fence` goes up each time the role changes hands. */
export interface RoleHolding {
  role: string;
  holder: string;
  since: number;
  fence: number;
}

/** The last tick of a scheduled job that a replica claimed: `slot` is the schedule's time of it. */
export interface TickClaim {
  job: string;
  slot: number;
  replica: string;
  claimedAt: number;
  /** When the run of that tick ended, if it did (finishTick). */
  doneAt?: number;
}

/**
 * What a claim of a tick found: `mine` (run it); `taken` (another live replica claimed it and its
 * run has not ended: claim again later, in case that replica dies before it ends); `settled` (its
 * run ended, or a later tick was claimed: nothing is left to run).
 */
export type TickClaimOutcome = 'mine' | 'taken' | 'settled';

/**
 * Work that one replica at a time does. A role (a connector that writes local state, the webhook
 * registrations' reconcile) is held until its holder gives it up or stops being live (no heartbeat
 * for REPLICA_TTL_MS); a scheduled job's tick is claimed once, by whoever asks first.
 */
export interface RoleStore {
  /**
   * Holds `role` for this replica unless another live replica holds it; resolves with the fence of
   * this replica's hold (unchanged while it keeps holding), or undefined when another holds it.
   */
  acquire(role: string, now: number): Promise<number | undefined>;
  /** Gives up a role this replica holds; the other replicas are told. */
  release(role: string): Promise<void>;
  /**
   * Claims the tick at `slot` (epoch ms) of `job`: `mine` for exactly one caller per job and slot,
   * never for a slot not after the last one claimed, but for that slot again once its claimer is no
   * longer live before its run ended (a replica killed mid-run: its tick is run by another).
   */
  claimTick(job: string, slot: number, now: number): Promise<TickClaimOutcome>;
  /** Notes that this replica's run of the tick at `slot` ended, whatever its outcome: nobody runs it again. */
  finishTick(job: string, slot: number, now: number): Promise<void>;
  /** The roles live replicas hold, and the last tick claimed per job. */
  holdings(now: number): Promise<{ roles: RoleHolding[]; ticks: TickClaim[] }>;
}

export interface ReplicaStore {
  /** Records this replica's heartbeat (and its URL once known). */
  beat(now: number, url?: string): Promise<void>;
  /** Replicas whose heartbeat is newer than `since`. */
  live(since: number): Promise<Replica[]>;
  /**
   * Forgets the rows of other replicas whose last heartbeat is older than `before` (processes that
   * died without leaving: a kill -9, a lost container); resolves with how many went.
   */
  forget(before: number): Promise<number>;
}
