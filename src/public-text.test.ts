import { describe, expect, it } from 'vitest';
import { publicText } from './public-text.js';

describe('publicText', () => {
  it('leaves out what the upstream said, whatever it holds, and keeps the call and the status', () => {
    const said = JSON.stringify('student "Jan" \\ Kowalski: answered HTTP 500: "x" is locked');
    expect(publicText(`upstream.http: GET /api/v2/users: upstream answered HTTP 423: ${said} (it asks to wait 45 s)`))
      .toBe('upstream.http: GET /api/v2/users: upstream answered HTTP 423 (it asks to wait 45 s)');
    expect(publicText(`webhook reconcile failed 2×: POST /api/v2/webhook: upstream answered HTTP 422: ${said}; before that it registered 3`))
      .toBe('webhook reconcile failed 2×: POST /api/v2/webhook: upstream answered HTTP 422; before that it registered 3');
  });

  it('replaces personal data in any other text, and leaves our own words alone', () => {
    expect(publicText('SQLITE_FULL: database or disk is full')).toBe('SQLITE_FULL: database or disk is full');
    expect(publicText('Sheets refused jan.kowalski@example.com, PESEL 85010112345')).toBe('Sheets refused [email], PESEL [redacted]');
  });
});
