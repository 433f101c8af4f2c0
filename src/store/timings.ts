/**
 * What a store tells of its own speed, for `/metrics` (docs/store.md, "Metrics"): how long each
 * transaction that wrote ran, and how long each wait for the disk to make commits durable took. A
 * webhook's acknowledgement waits for both, so a slowing disk shows here before it shows anywhere else.
 */
export interface StoreTimings {
  /** A transaction that wrote ran this long, from its start to its commit. */
  transaction(seconds: number): void;
  /** Making commits durable took this long: SQLite's sync of its WAL file, PostgreSQL's COMMIT of a durable transaction. */
  sync(seconds: number): void;
}
