import { describe, expect, it } from 'vitest';
import { upstreamReadiness } from './readiness.js';

describe('upstreamReadiness', () => {
  const failed = { ok: false, at: 2, error: 'upstream.invalid_json: GET /api/v2/students: cut short', code: 'upstream.invalid_json' };

  it('is ready once the last call and every kind of call succeeded the last time', () => {
    expect(upstreamReadiness(undefined, [])).toEqual({ ok: false, reason: 'no contact with the upstream yet' });
    expect(upstreamReadiness({ ok: true, at: 1 }, [])).toEqual({ ok: true });
    expect(upstreamReadiness(failed, [{ call: 'GET /api/v2/students', ...failed }])).toEqual({ ok: false, reason: `last upstream call failed: ${failed.error}` });
  });

  it('says a call that keeps failing while later calls of other kinds succeed', () => {
    expect(upstreamReadiness({ ok: true, at: 3 }, [{ call: 'GET /api/v2/students', ...failed }])).toEqual({ ok: false, reason: `the last GET /api/v2/students failed: ${failed.error}` });
    expect(upstreamReadiness({ ok: true, at: 3 }, [{ call: 'GET /api/v2/students', ...failed }, { call: 'GET /api/v2/users', ...failed }]))
      .toEqual({ ok: false, reason: `the last GET /api/v2/students failed: ${failed.error} (and GET /api/v2/users)` });
  });
});
