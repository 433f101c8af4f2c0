import type { Component } from '../lifecycle.js';
import type { Stream } from '../records.js';
import type { HistoryStore, PeopleStore } from './history-port.js';

export type * from './history-port.js';

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

// --- inbox -----------------------------------------------------------------------------------------

/** A stored webhook event; its id (`<event>:<object id>:<hash>`) is the dedupe key. */
export interface InboxEntry {
  id: string;
  event: string;
  /** ISO 8601, UTC. */
  receivedAt: string;
  /** Epoch ms of receipt; what pruning compares. */
  receivedAtMs: number;
  /** The verified body as received (UTF-8). */
  body: string;
  /** Ids of the records emitted, the latest re-emission's included. */
  recordIds: string[];
  /** How many times `events reprocess` re-emitted it. */
  reprocessed: number;
}

/** A correctly signed delivery whose timestamp was outside the tolerance; kept until released. */
export interface QuarantineEntry {
  /** The identity the event would get in the inbox. */
  id: string;
  event: string;
  reason: 'stale' | 'future';
  /** The signed timestamp of the delivery, as the header said. */
  timestamp: number;
  /** ISO 8601, UTC. */
  receivedAt: string;
  body: string;
}

export interface InboxStore {
  /**
   * Stores a new event and enqueues its records in one transaction, and drops a quarantined copy of
   * it. An id already stored writes nothing: `duplicate` (durable, since it was committed before).
   */
  accept(entry: InboxEntry, records: readonly Enqueue[]): Promise<'stored' | 'duplicate'>;
  get(id: string): Promise<InboxEntry | undefined>;
  /** Re-emits a stored event: bumps `reprocessed` from `expected` and enqueues; false when it changed meanwhile. */
  reprocess(id: string, expected: number, recordIds: string[], records: readonly Enqueue[]): Promise<boolean>;
  /** Keeps a stale delivery unless its event is stored or held already; true when it was added. */
  quarantine(entry: QuarantineEntry): Promise<boolean>;
  quarantined(): Promise<QuarantineEntry[]>;
  /**
   * Releases a quarantined delivery: removes it and stores its event as `accept` does. `duplicate`
   * when the event was stored meanwhile (only the quarantine entry goes), `missing` when not held.
   */
  release(id: string, entry: InboxEntry, records: readonly Enqueue[]): Promise<'released' | 'duplicate' | 'missing'>;
  /** Forgets events received before `beforeMs`; resolves with how many. */
  prune(beforeMs: number): Promise<number>;
  /** Stored events whose body contains one of `texts` (ASCII case ignored), newest first, at most `limit`. */
  search(texts: readonly string[], limit: number): Promise<InboxEntry[]>;
}

// --- outbox ----------------------------------------------------------------------------------------

/** One record to deliver to some connectors: its text is what they receive. */
export interface Enqueue {
  /** The record id: the connectors' idempotency key. */
  id: string;
  stream: Stream;
  /** `<stream>:<key>`: deliveries of one connector with the same order key go out in enqueue order. */
  orderKey: string;
  json: string;
  connectors: readonly string[];
}

/**
 * `blocked`: waits behind an older delivery of its connector and order key (shown as pending). A
 * delivery that is done leaves the store.
 */
export type DeliveryStatus = 'pending' | 'active' | 'dead' | 'blocked';

/** One delivery of one record to one connector (`<connector>:<record id>`). Times are epoch ms. */
export interface Delivery {
  id: string;
  connector: string;
  /** The record id (the idempotency key). */
  recordId: string;
  stream: Stream;
  orderKey: string;
  /** Enqueue order, increasing across the store's life. */
  seq: number;
  status: DeliveryStatus;
  /** Start of the retry window; reset by a retry by hand. */
  enqueuedAt: number;
  runAt: number;
  attempts: number;
  lastError?: string;
  lastAttemptAt?: number;
  /** An active delivery belongs to `leaseOwner` until then. */
  leaseUntil?: number;
  leaseOwner?: string;
  /** Counts claims: a settle names the fence it claimed with, so a late answer after a new claim is refused. */
  fence: number;
  /** A created change delivered straight from a fresh snapshot (CreatedRange), not a row of its own. */
  range?: RangeItem;
}

/** Where a created change delivered from a fresh snapshot's range comes from. */
export interface RangeItem {
  stream: SnapshotStream;
  key: number;
  chain: string;
}

/**
 * A claimed delivery and its record: the JSON text, or, for a first cycle's `created` change, the
 * parts the outbox builds it from (the snapshot row as it was when the change was detected).
 */
export interface Claimed {
  delivery: Delivery;
  json?: string;
  created?: CreatedParts;
}

export interface CreatedParts {
  stream: SnapshotStream;
  key: number;
  chain: string;
  detectedAt: string;
  /** The row's JSON: text, or its UTF-8 bytes where the engine reads them cheaper so. */
  text: string | Uint8Array;
}

export type Settlement = (
  | { id: string; fence: number; status: 'done'; at: number }
  | { id: string; fence: number; status: 'pending' | 'dead'; at: number; runAt: number; attempts: number; lastError: string }
) & {
  connector: string;
  range?: RangeItem;
  /** How long the attempt took, and the receiver's HTTP status if it answered: kept in the attempt's history. */
  durationMs?: number;
  httpStatus?: number;
};

export interface ClaimRequest {
  connector: string;
  limit: number;
  now: number;
  leaseMs: number;
}

export interface DeliveryFilter {
  /** `pending` includes deliveries in flight and those waiting behind another. */
  state?: 'pending' | 'active' | 'dead';
  connector?: string;
  limit?: number;
}

/** A delivery as `deliveries list` shows it: waiting ones name the delivery they wait behind. */
export interface ListedDelivery extends Delivery {
  waitingFor?: string;
}

/** What a retry by hand puts back: one delivery, several, or every dead one (of a connector). */
export type RetryTarget = { id: string } | { ids: readonly string[] } | { allDead: true; connector?: string };

export interface DeliveryLookup {
  ids?: readonly string[];
  keys?: readonly { connector: string; orderKey: string }[];
}

/** A connector's deliveries that failed and wait for their next try. */
export interface Retrying {
  connector: string;
  count: number;
  /** The soonest next try. */
  nextRunAt: number;
  lastAttemptAt?: number;
  /** The error of the latest failed attempt. */
  lastError: string;
}

export interface OutboxCounts {
  /** Not done and not dead: pending, in flight, waiting behind another, and owed by a created range. */
  depth: number;
  dead: number;
}

/**
 * The created changes a fresh snapshot owes one connector (a first `emit` cycle): delivered straight
 * from the snapshot's rows in key order, a batch at a time, with no row of their own. A change whose
 * delivery fails alone, or whose key has another delivery queued, becomes a row like any other.
 */
export interface CreatedRange {
  connector: string;
  stream: SnapshotStream;
  detectedAt: string;
  /** Created changes not delivered yet: those of the keys after `after` (all, when absent) up to `upto`. */
  remaining: number;
  after?: number;
  upto: number;
  runAt: number;
  attempts: number;
  lastError?: string;
}

export interface OutboxStore {
  /** Enqueues records (ids already queued are skipped), with state in the same transaction. */
  enqueue(records: readonly Enqueue[], state?: StatePatch): Promise<number>;
  /** Leases up to `limit` due heads of their order keys to this replica, soonest first. */
  claim(request: ClaimRequest): Promise<Claimed[]>;
  /**
   * Records the outcome of claimed deliveries, each only while this replica still holds it under
   * that fence; resolves with the ids that were settled. A done delivery leaves the store and makes
   * the next one of its order key pending; its record goes with its last delivery.
   */
  settle(settlements: readonly Settlement[]): Promise<string[]>;
  /** Dead (or waiting) deliveries back to pending, due now, with a fresh retry window; the ids retried. */
  retry(target: RetryTarget, now: number): Promise<string[]>;
  get(id: string): Promise<Delivery | undefined>;
  list(filter?: DeliveryFilter): Promise<ListedDelivery[]>;
  /** The deliveries with these ids, and those of these connectors' order keys, in enqueue order. */
  lookup(query: DeliveryLookup): Promise<ListedDelivery[]>;
  /** Per connector, the deliveries waiting for another try after a failure (ranges included). */
  retrying(): Promise<Retrying[]>;
  counts(): Promise<Map<string, OutboxCounts>>;
  ranges(): Promise<CreatedRange[]>;
  /** The earliest runAt of a connector's pending deliveries and ranges not in flight (its worker's next wake-up). */
  nextRunAt(connector: string): Promise<number | undefined>;
  /** Leases past their time, or held by replicas that stopped, are pending again (the attempt stays counted). */
  sweep(now: number): Promise<{ reclaimed: number }>;
}

// --- snapshot --------------------------------------------------------------------------------------

export type SnapshotStream = 'students' | 'users';

/** One polled record as last seen: the chain of its last change, its JSON, the hash of its raw bytes. */
export interface SnapshotRow {
  key: number;
  chain: string;
  body: string;
  rawHash: string | null;
}

/** Raw hash → key of every row, and the snapshot version it was read at (the list worker's index). */
export interface SnapshotIndex {
  version: number;
  keys: number[];
  hashes: (string | null)[];
}

/**
 * Rows of a new snapshot as the list worker encodes them: row i's chain and JSON are the UTF-8
 * bytes `bytes[ends[i-1]..ends[i])`, the chain first (CHAIN_LENGTH characters of ASCII).
 */
export interface FreshRows {
  keys: number[];
  hashes: string[];
  bytes: Uint8Array;
  ends: number[];
}

/** A staged change of one row: `body: null` deletes it; `change` is the record to deliver, if any. */
export interface StagedRow {
  key: number;
  chain: string;
  body: string | null;
  rawHash: string | null;
  change?: { id: string; json: string };
}

export interface SnapshotStore {
  size(stream: SnapshotStream): Promise<number>;
  /** Grows with every applied cycle: a cached index of another version is stale. */
  version(stream: SnapshotStream): Promise<number>;
  index(stream: SnapshotStream): Promise<SnapshotIndex>;
  rows(stream: SnapshotStream, keys: readonly number[]): Promise<SnapshotRow[]>;
  /** Rows after `after` in key order, at most `limit`. */
  scan(stream: SnapshotStream, after: number | undefined, limit: number): Promise<SnapshotRow[]>;
  /**
   * A cycle writes what it found into a staging area first (a fresh snapshot on an empty stream,
   * changed rows otherwise); nothing a reader sees moves until `apply`. `begin` drops what an earlier
   * cycle left staged.
   */
  begin(stream: SnapshotStream, kind: 'fresh' | 'changes'): Promise<void>;
  stageFresh(stream: SnapshotStream, rows: FreshRows): Promise<void>;
  stageChanges(stream: SnapshotStream, rows: readonly StagedRow[]): Promise<void>;
  discard(stream: SnapshotStream): Promise<void>;
  /**
   * Makes a staged fresh snapshot the stream's snapshot, with `state`, in one transaction. With
   * `created`, every row also owes each connector a created change, delivered from a CreatedRange.
   */
  applyFresh(stream: SnapshotStream, apply: { state: StatePatch; created?: { detectedAt: string; connectors: readonly string[]; now: number } }): Promise<void>;
  /**
   * Moves up to `limit` staged changes (key order) into the snapshot with their records, and
   * `state` with the last of them (`done`). Records of earlier created changes keep the rows they
   * were made from.
   */
  applyChanges(stream: SnapshotStream, apply: { limit: number; connectors: readonly string[]; state: StatePatch; now: number }): Promise<{ applied: number; done: boolean }>;
  /**
   * Turns up to `limit` keys of each of the stream's created ranges into deliveries of their own, the
   * text kept with them when the rows change; resolves with how many the ranges still owe. A cycle
   * does this before it changes a stream whose ranges are not delivered yet.
   */
  materializeCreated(stream: SnapshotStream, limit: number, now: number): Promise<number>;
  /** Created changes the stream's ranges still owe, all connectors. */
  createdPending(stream: SnapshotStream): Promise<number>;
}

// --- state and replicas ----------------------------------------------------------------------------

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
}

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
  /** Claims the tick at `slot` (epoch ms) of `job`: true for exactly one caller per job and slot, false for any slot not after the last one claimed. */
  claimTick(job: string, slot: number, now: number): Promise<boolean>;
  /** The roles live replicas hold, and the last tick claimed per job. */
  holdings(now: number): Promise<{ roles: RoleHolding[]; ticks: TickClaim[] }>;
}

export interface ReplicaStore {
  /** Records this replica's heartbeat (and its URL once known). */
  beat(now: number, url?: string): Promise<void>;
  /** Replicas whose heartbeat is newer than `since`. */
  live(since: number): Promise<Replica[]>;
}
