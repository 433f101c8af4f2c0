/**
 * What a store tells of its own speed, for `/metrics` (docs/store.md, "Metrics"): how long its
 * transactions ran, and how long each wait for the disk to make commits durable took. A webhook's
 * acknowledgement waits for both, so a slowing disk shows here before it shows anywhere else.
 */
export interface StoreTimings {
  /**
   * A transaction ran this long, from its start to its commit. On SQLite every transaction of the
   * database thread, reads too: a webhook's commit waits behind each. On PostgreSQL each that wrote:
   * reads there run on connections of their own and hold no write up.
   */
  transaction(seconds: number): void;
  /** Making commits durable took this long: SQLite's sync of its WAL file, PostgreSQL's COMMIT of a durable transaction. */
  sync(seconds: number): void;
}
