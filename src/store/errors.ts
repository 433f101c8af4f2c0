import { BridgeError } from '../errors.js';

/**
 * A store call that failed: `store.unavailable` (retryable) when the store cannot write or be reached
 * now — a full disk, an I/O error, a database that is down — which heals by itself; `store.failed`
 * otherwise (a bug, or a database edited by hand).
 */
export function storeError(unavailable: boolean, message: string, cause?: unknown): BridgeError {
  return unavailable
    ? new BridgeError('store.unavailable', `the store cannot write: ${message}`, { retryable: true, cause })
    : new BridgeError('store.failed', `a store call failed: ${message}`, { cause });
}
