import { describe, expect, it } from 'vitest';
import { isEcho, SAME_SIGNAL_MS } from './start.js';

describe('isEcho', () => {
  const first = { signal: 'SIGINT' as const, at: 10_000 };

  it('takes the same signal again, soon after, for the first one passed on', () => {
    expect(isEcho(first, 'SIGINT', 10_000)).toBe(true);
    expect(isEcho(first, 'SIGINT', 10_000 + SAME_SIGNAL_MS - 1)).toBe(true);
  });

  it('takes another signal, or the same one later, for a second signal', () => {
    expect(isEcho(first, 'SIGTERM', 10_001)).toBe(false);
    expect(isEcho(first, 'SIGINT', 10_000 + SAME_SIGNAL_MS)).toBe(false);
  });
});
