import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import { gauge } from '../metrics.js';
import type { Readiness, ReadinessState } from '../readiness.js';
import type { Liveness } from './liveness.js';

/**
 * /healthz (the daemon can work: liveness.ts), /readyz (every registered check passes), /metrics
 * (Prometheus text). As Kubernetes' API server has it, `/readyz/<check>` answers for one check alone
 * and `/readyz?exclude=<check>` (repeatable) leaves checks out: a load balancer in front of replicas
 * asks `/readyz/store` (this replica can take webhooks), since a connector's failing check or an
 * upstream outage is the same on every replica and turning webhooks away would not mend it.
 */
export function registerHealthRoutes(http: FastifyInstance, deps: { readiness: Readiness; metrics: Registry; liveness?: () => Liveness }): void {
  http.get('/healthz', async (_request, reply) => {
    const live = deps.liveness?.() ?? { ok: true };
    return live.ok ? { status: 'ok' } : reply.code(503).send({ status: 'failing', reasons: live.reasons });
  });

  const answer = (reply: FastifyReply, checks: Record<string, ReadinessState>) => {
    const reasons = Object.entries(checks).flatMap(([name, state]) => (state.ok ? [] : [`${name}: ${state.reason}`]));
    const ready = reasons.length === 0;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', reasons, checks });
  };

  http.get('/readyz', async (request, reply) => {
    const { checks } = deps.readiness.evaluate();
    const given = (request.query as Record<string, unknown>).exclude;
    const excluded = new Set((Array.isArray(given) ? given : given === undefined ? [] : [given]).map(String));
    const unknown = [...excluded].filter((name) => !(name in checks));
    if (unknown.length > 0) return reply.code(400).send({ error: `no check named ${unknown.join(', ')}: the checks are ${Object.keys(checks).join(', ')}` });
    return answer(reply, Object.fromEntries(Object.entries(checks).filter(([name]) => !excluded.has(name))));
  });

  http.get('/readyz/:check', async (request, reply) => {
    const { checks } = deps.readiness.evaluate();
    const { check } = request.params as { check: string };
    const state = checks[check];
    if (!state) return reply.code(404).send({ error: `no check named ${check}: the checks are ${Object.keys(checks).join(', ')}` });
    return answer(reply, { [check]: state });
  });

  // Each check of /readyz as a series, so that a scraper sees why the store's gauges are missing.
  gauge(deps.metrics, 'schoolbridge_check_ok', 'Whether each check of /readyz passes (1) or not (0)', ['check'], function collect() {
    this.reset();
    for (const [check, state] of Object.entries(deps.readiness.evaluate().checks)) this.set({ check }, state.ok ? 1 : 0);
  });

  http.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.metrics();
    return reply.header('content-type', deps.metrics.contentType).send(text);
  });
}
