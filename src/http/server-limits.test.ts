import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastifyServerOptions, KEEP_ALIVE_TIMEOUT_MS } from './server-limits.js';

const limits = (requestTimeoutMs: number) => ({ requestTimeoutMs, connectionTimeoutMs: 300_000, maxConnections: 256 });

describe('fastifyServerOptions', () => {
  it.each([
    [30_000, 29_000, 1000],
    [5_000, 4_500, 500],
    [300, 270, 30],
    [100, 90, 10],
  ])('request timeout %i ms: Node gives up after %i ms, looking every %i ms', (limit, timeout, step) => {
    expect(fastifyServerOptions(limits(limit))).toEqual({
      requestTimeout: timeout,
      connectionTimeout: 300_000,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      http: { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: step },
    });
  });

  it('closes a slow request by the configured time at the latest: the timeout plus one look never passes it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 10_000_000 }), (limit) => {
        const { http } = fastifyServerOptions(limits(limit));
        expect(http!.requestTimeout! + http!.connectionsCheckingInterval!).toBeLessThanOrEqual(limit);
        expect(http!.requestTimeout).toBeGreaterThan(0);
        expect(http!.headersTimeout).toBe(http!.requestTimeout);
      }),
    );
  });
});
