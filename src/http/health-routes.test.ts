import Fastify from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { counter, createMetricsRegistry, gauge } from '../metrics.js';
import { PAGE_READ_MS } from '../page-read.js';
import { createReadiness } from '../readiness.js';
import { registerHealthRoutes } from './health-routes.js';

const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

function build() {
  const http = Fastify();
  apps.push(http);
  const readiness = createReadiness();
  const metrics = createMetricsRegistry({ defaultMetrics: true });
  registerHealthRoutes(http, { readiness, metrics });
  return { http, readiness, metrics };
}

describe('health routes', () => {
  it('/healthz answers 200', async () => {
    const { http } = build();
    expect((await http.inject('/healthz')).statusCode).toBe(200);
  });

  it('/readyz is 503 with reasons until every check passes', async () => {
    const { http, readiness } = build();
    readiness.set('store', { ok: true });
    readiness.set('upstream', { ok: false, reason: 'no contact with the upstream yet' });
    const notReady = await http.inject('/readyz');
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json().reasons).toEqual(['upstream: no contact with the upstream yet']);
    readiness.set('upstream', { ok: true });
    expect((await http.inject('/readyz')).statusCode).toBe(200);
  });

  it('/readyz/<check> answers for one check, and ?exclude= leaves checks out', async () => {
    const { http, readiness } = build();
    readiness.set('store', { ok: true });
    readiness.set('upstream', { ok: false, reason: 'upstream.network: ECONNREFUSED' });
    readiness.set('connector:sheet', { ok: false, reason: 'sheets.unavailable: Sheets answered 503' });
    const store = await http.inject('/readyz/store');
    expect([store.statusCode, store.json()]).toEqual([200, { status: 'ready', reasons: [], checks: { store: { ok: true } } }]);
    const sheet = await http.inject('/readyz/connector:sheet');
    expect([sheet.statusCode, sheet.json().reasons]).toEqual([503, ['connector:sheet: sheets.unavailable: Sheets answered 503']]);
    expect((await http.inject('/readyz?exclude=connector:sheet')).json().reasons).toEqual(['upstream: upstream.network: ECONNREFUSED']);
    expect((await http.inject('/readyz?exclude=connector:sheet&exclude=upstream')).statusCode).toBe(200);
    // A name that is no check is an error, not silently ready.
    const typo = await http.inject('/readyz/stroe');
    expect([typo.statusCode, typo.json().error]).toEqual([404, 'no check named stroe: the checks are store, upstream, connector:sheet']);
    expect((await http.inject('/readyz?exclude=upstrem')).statusCode).toBe(400);
  });

  it('/readyz reports a check that throws as not ready', async () => {
    const { http, readiness } = build();
    readiness.register('broken', () => {
      throw new Error('boom');
    });
    const response = await http.inject('/readyz');
    expect(response.statusCode).toBe(503);
    expect(response.json().reasons[0]).toContain('boom');
  });

  it('/metrics is Prometheus text with process metrics and the project registry', async () => {
    const { http, metrics } = build();
    counter(metrics, 'schoolbridge_test_total', 'a test counter', ['reason']).inc({ reason: 'x' });
    const response = await http.inject('/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toContain('schoolbridge_process_cpu_user_seconds_total');
    expect(response.body).toContain('schoolbridge_test_total{reason="x"} 1');
  });

  it('/metrics gives each check of /readyz, and goes without a gauge whose read does not answer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { http, readiness, metrics } = build();
      readiness.set('store', { ok: false, reason: 'the store has not answered for 10 s' });
      readiness.set('upstream', { ok: true });
      let answers = false;
      gauge(metrics, 'schoolbridge_test_depth', 'a gauge read from a store', ['connector'], async function collect() {
        if (!answers) await new Promise(() => {});
        this.set({ connector: 'files' }, 3);
      });
      answers = true;
      expect((await http.inject('/metrics')).body).toContain('schoolbridge_test_depth{connector="files"} 3');
      answers = false;
      const scrape = http.inject('/metrics');
      await vi.advanceTimersByTimeAsync(PAGE_READ_MS);
      const { body } = await scrape;
      expect(body).toContain('schoolbridge_check_ok{check="store"} 0');
      expect(body).toContain('schoolbridge_check_ok{check="upstream"} 1');
      expect(body).not.toContain('schoolbridge_test_depth{');
    } finally {
      vi.useRealTimers();
    }
  });
});
