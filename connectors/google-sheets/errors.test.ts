import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { classifySheetsError, QUOTA_BACKOFF_MS } from './errors.js';

const http = (status: number, message: string, headers: Record<string, string> = {}) =>
  Object.assign(new Error(message), { status, response: { status, headers: new Headers(headers), data: { error: { code: status, message } } } });
const ctx = { spreadsheetId: 'S', email: 'sa@p.iam.gserviceaccount.com' };

describe('classifySheetsError', () => {
  it.each([
    [http(429, 'Quota exceeded', { 'retry-after': '7' }), 'sheets.rate_limited', true, 7000],
    [http(429, 'Quota exceeded'), 'sheets.rate_limited', true, QUOTA_BACKOFF_MS],
    [http(503, 'unavailable'), 'sheets.unavailable', true, undefined],
    [http(500, 'internal', { 'retry-after': '2' }), 'sheets.unavailable', true, 2000],
    [http(400, 'This action would increase the number of cells in the workbook above the limit of 10000000 cells.'), 'sheets.cell_limit', false, undefined],
    [http(400, 'Unable to parse range: Students!1:1'), 'sheets.tab_changed', true, undefined],
    [http(400, 'Invalid value'), 'sheets.rejected', false, undefined],
    [http(401, 'Request had invalid authentication credentials.'), 'sheets.unauthenticated', false, undefined],
    [http(403, 'The caller does not have permission'), 'sheets.forbidden', false, undefined],
    [http(404, 'Requested entity was not found.'), 'sheets.not_found', false, undefined],
    [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'sheets.network', true, undefined],
    [Object.assign(new Error('error:1E08010C:DECODER routines::unsupported'), { code: 'ERR_OSSL_UNSUPPORTED' }), 'sheets.credentials', false, undefined],
    [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'sheets.aborted', true, undefined],
  ])('%#: %s', (error, code, retryable, retryAfterMs) => {
    const result = classifySheetsError(error, 0, ctx);
    expect(result).toMatchObject({ code, retryable });
    expect(result.retryAfterMs).toBe(retryAfterMs);
  });

  it('tells whom to share the spreadsheet with', () => {
    expect(classifySheetsError(http(403, 'no'), 0, ctx).message).toContain('share the spreadsheet with sa@p.iam.gserviceaccount.com');
  });

  it('says what to do when Google rejects the credentials: a fresh token, or a new key', () => {
    const denied = http(401, 'Request had invalid authentication credentials.');
    expect(classifySheetsError(denied, 0, { spreadsheetId: 'S' }).message).toBe(
      'Google rejected the credentials (Request had invalid authentication credentials.); an accessToken lasts about an hour: set a fresh one, or use credentialsFile (a service-account key) for a daemon',
    );
    expect(classifySheetsError(denied, 0, ctx).message).toContain('the key of sa@p.iam.gserviceaccount.com may have been deleted or disabled: download a new JSON key (credentialsFile)');
  });

  it('names the host it could not reach', () => {
    const refused = Object.assign(new Error('fetch failed'), { code: 'ECONNREFUSED' });
    expect(classifySheetsError(refused, 0, { ...ctx, host: '127.0.0.1:47222' }).message).toBe('Sheets (127.0.0.1:47222) unreachable: fetch failed');
  });

  it('passes BridgeErrors through and rethrows what it does not know (a bug)', () => {
    const known = new BridgeError('x', 'y');
    expect(classifySheetsError(known, 0, ctx)).toBe(known);
    expect(() => classifySheetsError(new TypeError('undefined is not a function'), 0, ctx)).toThrow(TypeError);
  });
});
