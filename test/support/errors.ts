import { BridgeError } from '../../src/errors.js';

/** The BridgeError `run` throws; fails the test when it throws nothing or something else. */
export function thrown(run: () => unknown): BridgeError {
  try {
    run();
  } catch (error) {
    if (error instanceof BridgeError) return error;
    throw error;
  }
  throw new Error('expected a BridgeError');
}

/** The BridgeError `promise` rejects with; fails the test when it resolves or rejects with something else. */
export async function rejected(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BridgeError) return error;
    throw error;
  }
  throw new Error('expected a BridgeError');
}
