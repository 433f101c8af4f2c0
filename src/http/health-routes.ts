import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Readiness } from '../readiness.js';
import type { Liveness } from './liveness.js';

/**
 * /healthz (the daemon can work: liveness.ts), /readyz (every registered check passes), /metrics
 * (Prometheus text).
 */
export function registerHealthRoutes(http: FastifyInstance, deps: { readiness: Readiness; metrics: Registry; liveness?: () => Liveness }): void {
  http.get('/healthz', async (_request, reply) => {
    const live = deps.liveness?.() ?? { ok: true };
    return live.ok ? { status: 'ok' } : reply.code(503).send({ status: 'failing', reasons: live.reasons });
  });

  http.get('/readyz', async (_request, reply) => {
    const { ready, checks } = deps.readiness.evaluate();
    const reasons = Object.entries(checks)
      .filter(([, state]) => !state.ok)
      .map(([name, state]) => `${name}: ${state.ok ? '' : state.reason}`);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', reasons, checks });
  });

  http.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.metrics();
    return reply.header('content-type', deps.metrics.contentType).send(text);
  });
}
