import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { afterBatch, MAX_RECEIVER_WAIT_MS, NO_WAIT } from './receiver-wait.js';

const error = (retryAfterMs?: number) => new BridgeError('connector.http', 'the receiver answered HTTP 429', { retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
const asked = (ms: number) => ({ status: 'retry' as const, error: error(), retryAfterMs: ms });
const done = { status: 'done' as const };

describe('afterBatch', () => {
  it('holds every delivery until the longest wait a batch was asked for, then lets one batch go first', () => {
    const wait = afterBatch(NO_WAIT, [done, asked(10_000), asked(30_000)], 900, 1_000);
    expect(wait).toEqual({ until: 31_000, since: 1_000, probing: true });
    // Read from the error too (a connector that reports it there), and never shortened by a later answer.
    expect(afterBatch(wait, [{ status: 'retry', error: error(5_000) }], 1_100, 2_000)).toEqual({ until: 31_000, since: 2_000, probing: true });
    expect(afterBatch(NO_WAIT, [asked(10 * MAX_RECEIVER_WAIT_MS)], 0, 0).until).toBe(MAX_RECEIVER_WAIT_MS);
  });

  it('ends the one-at-a-time once a batch started after the wait gets through', () => {
    const wait = afterBatch(NO_WAIT, [asked(10_000)], 0, 1_000);
    // A batch in flight before the answer says nothing of the receiver since.
    expect(afterBatch(wait, [done], 500, 2_000)).toBe(wait);
    expect(afterBatch(wait, [{ status: 'retry', error: error() }], 11_000, 11_500)).toBe(wait);
    expect(afterBatch(wait, [done], 11_000, 11_500)).toEqual({ ...wait, probing: false });
  });

  it('leaves a connector that was not asked to wait as it is', () => {
    expect(afterBatch(NO_WAIT, [done, { status: 'retry', error: error() }, { status: 'dead', error: error() }], 0, 5)).toBe(NO_WAIT);
    expect(afterBatch(NO_WAIT, [asked(0)], 0, 5)).toBe(NO_WAIT);
  });
});
