import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync } from 'node:fs';
import path from 'node:path';

type Sync = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

/**
 * Makes commits durable without holding the database thread (docs/store.md "Durability"). The
 * thread commits with `synchronous = NORMAL`, which writes a commit's frames to the WAL file without
 * fsync; this syncs the WAL file (fdatasync, in the thread pool) and releases a transaction's results
 * only once a sync begun after its commit has ended. So no result leaves the thread before
 * everything it could have read is on disk, exactly as with `synchronous = FULL`, while the thread
 * runs the next transaction during the sync, and one sync covers every commit made before it began.
 *
 * A failed sync fails the results it held: their rows are committed but not known to be on disk,
 * so nothing may be acknowledged on them. Nor does a later sync that succeeds make them durable:
 * Linux may mark the pages of a failed write clean without writing them, and report the error only
 * once. So after a failure nothing is released, and no sync starts, until the database thread has
 * repaired the WAL (`repaired`: a checkpoint copied every frame into the database file, synced it
 * and started the WAL over) or failed to (`repairFailed`: what is held fails with that error).
 */
export class WalSync {
  /** Transactions that wrote, counted. */
  private written = 0;
  /** `written` as it was when the last sync that succeeded began. */
  private synced = 0;
  private inFlight = false;
  private held: { needs: number; release(error?: Error): void }[] = [];
  private fd: number | undefined;
  private waiting: (() => void)[] = [];
  /** Set by a failed sync until the WAL is repaired: nothing written before it is known to be on disk. */
  private failed = false;

  constructor(
    private readonly walFile: string,
    private readonly sync: Sync = fdatasync,
    /** Told when a sync failed: the WAL needs a repair before anything is released again. */
    private readonly onFailure: () => void = () => {},
  ) {}

  /**
   * A transaction committed (`wrote`: it changed rows). `release` is called once it and every
   * transaction before it are on disk, or with the error that kept them from it.
   */
  committed(wrote: boolean, release: (error?: Error) => void): void {
    if (wrote) this.written += 1;
    const needs = this.written;
    if (needs <= this.synced) {
      release();
      return;
    }
    this.held.push({ needs, release });
    this.start();
  }

  /** Whether every commit so far is on disk and nothing waits for it. */
  idle(): boolean {
    return this.held.length === 0 && !this.inFlight && !this.failed;
  }

  /** Whether a sync failed since the last repair: no result is released until the next one. */
  needsRepair(): boolean {
    return this.failed;
  }

  /**
   * Every commit so far is on disk by another way than this file's sync: a checkpoint copied the
   * whole WAL into the database file and synced that (the database thread's repair).
   */
  repaired(): void {
    this.failed = false;
    this.synced = this.written;
    this.releaseUpTo(this.synced);
    this.next();
  }

  /** Syncs the WAL file here and now (the repair, once it emptied the file); throws what the sync met. */
  syncNow(): void {
    fdatasyncSync(this.open());
  }

  /** The repair failed: what is held cannot be made durable now and fails with its error. */
  repairFailed(error: Error): void {
    this.fail(Infinity, error);
    this.next();
  }

  /** Resolves once nothing is held (before the connection closes). */
  drained(): Promise<void> {
    if (this.held.length === 0 && !this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private start(): void {
    if (this.inFlight || this.held.length === 0 || this.failed) return;
    const target = this.written;
    let fd: number;
    try {
      fd = this.open();
    } catch (error) {
      this.fail(target, error as Error);
      this.next();
      return;
    }
    this.inFlight = true;
    this.sync(fd, (error) => {
      this.inFlight = false;
      if (error) {
        this.failed = true;
        this.fail(target, error);
        this.onFailure();
      } else {
        this.synced = Math.max(this.synced, target);
        this.releaseUpTo(this.synced);
      }
      this.next();
    });
  }

  /** After a sync: another for what came since, or tell those waiting that nothing is held. */
  private next(): void {
    if (this.held.length > 0) this.start();
    else for (const resolve of this.waiting.splice(0)) resolve();
  }

  /**
   * The WAL file, opened once: SQLite keeps it (the same file) while its connection is open. The
   * first time, its directory is synced too, so that a WAL file made just now is found after a power cut.
   */
  private open(): number {
    if (this.fd !== undefined) return this.fd;
    const fd = openSync(this.walFile, 'r+');
    const dir = openSync(path.dirname(this.walFile), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.fd = fd;
    return fd;
  }

  private releaseUpTo(synced: number): void {
    while (this.held.length > 0 && this.held[0]!.needs <= synced) this.held.shift()!.release();
  }

  private fail(target: number, error: Error): void {
    while (this.held.length > 0 && this.held[0]!.needs <= target) this.held.shift()!.release(error);
  }
}
