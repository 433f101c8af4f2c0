import { Dispatcher } from 'undici';
import { BridgeError } from '../errors.js';

/**
 * The dispatcher a batch's deliveries go through: it refuses to start a request once this replica's
 * leases may be another's (`stand` says no: on a shared store a replica whose heartbeat is
 * REPLICA_TTL_MS old loses them to the others' sweep). A replica frozen for a while (a pause, a VM
 * suspended, a long GC) and woken in the middle of a batch would otherwise send the batch's next
 * record after a newer one of the same key that another replica delivered meanwhile. Checked as each
 * request starts, in the same turn as the connector's call: the woken process runs its I/O before its
 * timers, so the outbox's own timers would learn of the pause too late.
 */
export class LeaseGuard extends Dispatcher {
  constructor(
    private readonly inner: Dispatcher,
    private readonly stand: () => boolean,
  ) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (!this.stand()) {
      // undici's request and fetch reject with what dispatch throws.
      throw new BridgeError('outbox.lease_lost', "this replica's heartbeat is too old for its leases to be sure: the delivery waits for another try, which may be another replica's", { retryable: true });
    }
    return this.inner.dispatch(options, handler);
  }

  // The guard owns nothing: the daemon closes the dispatcher it wraps.
  override async close(): Promise<void> {}
  override async destroy(): Promise<void> {}
}
