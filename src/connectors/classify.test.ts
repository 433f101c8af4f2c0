import { describe, expect, it } from 'vitest';
import { classifyResponse } from './classify.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');

describe('classifyResponse', () => {
  it('2xx is done; 408, 429 and 5xx are retried, after Retry-After when given; another 4xx is dead', () => {
    expect(classifyResponse(204, {}, '', NOW)).toEqual({ status: 'done', httpStatus: 204 });
    const later = classifyResponse(429, { 'retry-after': '30' }, 'slow down', NOW);
    expect(later).toMatchObject({ status: 'retry', retryAfterMs: 30_000, error: { code: 'webhook.unavailable', message: 'the receiver answered 429: slow down' } });
    expect(classifyResponse(422, {}, ' bad\n  invoice ', NOW, 'accounting')).toMatchObject({ status: 'dead', error: { code: 'accounting.rejected', message: 'the receiver answered 422: bad invoice' } });
    // 5xx ends at 599: a status past the classes HTTP defines is no server error to wait out.
    expect(classifyResponse(599, {}, '', NOW)).toMatchObject({ status: 'retry' });
    expect(classifyResponse(999, {}, '', NOW)).toMatchObject({ status: 'dead', error: { code: 'webhook.rejected', message: 'the receiver answered 999' } });
  });

  it('names a redirect as one, by the origin it points to, and says it is not followed', () => {
    const hint = ": deliveries do not follow redirects; set the connector's url to where it points)";
    expect(classifyResponse(301, { location: 'https://new.example:8443/hooks/s3cret-path?token=t' }, '', NOW).status).toBe('dead');
    expect(classifyResponse(301, { location: 'https://new.example:8443/hooks/s3cret-path?token=t' }, '', NOW)).toMatchObject({
      error: { message: `the receiver answered 301 (a redirect to https://new.example:8443${hint}` },
    });
    expect(classifyResponse(307, { location: '/v2/hook' }, '', NOW)).toMatchObject({ error: { message: `the receiver answered 307 (a redirect to another path of the same host${hint}` } });
    expect(classifyResponse(302, {}, 'Found', NOW)).toMatchObject({ error: { message: `the receiver answered 302 (a redirect${hint}: Found` } });
  });
});
