import type { Clock } from '../clock.js';
import type { RoleStore } from '../store/index.js';

/** How long what the store said of a role holds before the worker asks again. */
export const ROLE_CHECK_MS = 2000;

/**
 * This replica's hold on an exclusive connector's role (docs/store.md, "Replicas"): asked for before
 * a claim, asked again every ROLE_CHECK_MS (a replica whose heartbeat stopped loses it to another),
 * given up when the outbox stops. `taken` is called each time this replica takes the role anew, as
 * what it knew of the connector's files may have changed while another replica held it.
 */
export class RoleHold {
  private fence: number | undefined;
  private checkedAt = -Infinity;

  constructor(
    private readonly roles: RoleStore,
    readonly role: string,
    private readonly clock: Clock,
    private readonly taken: () => void,
  ) {}

  /** Whether this replica may deliver now; a store that cannot answer means no. */
  async held(): Promise<boolean> {
    const now = this.clock.now();
    if (now - this.checkedAt < ROLE_CHECK_MS) return this.fence !== undefined;
    let fence: number | undefined;
    try {
      fence = await this.roles.acquire(this.role, now);
    } catch {
      fence = undefined;
    }
    this.checkedAt = this.clock.now();
    if (fence !== undefined && fence !== this.fence) this.taken();
    this.fence = fence;
    return fence !== undefined;
  }

  /** Whether it was held at the last look (no store call). */
  holds(): boolean {
    return this.fence !== undefined;
  }

  /** Asks the store at the next look: another replica gave a role up. */
  recheck(): void {
    if (this.fence === undefined) this.checkedAt = -Infinity;
  }

  async release(): Promise<void> {
    if (this.fence === undefined) return;
    this.fence = undefined;
    this.checkedAt = -Infinity;
    await this.roles.release(this.role).catch(() => {});
  }
}
