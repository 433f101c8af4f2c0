import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorGroup, publicError } from './public-error.js';

describe('publicError', () => {
  it.each([
    ['webhook.rejected: the receiver answered 422: {"buyer":"Jan Kowalski","pesel":"85010112345"}', 'webhook.rejected (HTTP 422)'],
    ['accounting.unavailable: the receiver answered 503', 'accounting.unavailable (HTTP 503)'],
    ['expired after 84 attempts; last error: webhook.unavailable: the receiver answered 503: jan@example.com', 'webhook.unavailable (HTTP 503); expired after 84 attempts'],
    ['webhook.network: no answer within 15000 ms (timeoutMs)', 'webhook.network'],
    ['expired after 1 attempt (the receiver asks to wait 83 h, past delivery.maxAgeHours); last error: webhook.unavailable: the receiver answered 429', 'webhook.unavailable (HTTP 429); expired after 1 attempt'],
    ['sheets.unavailable: Sheets answered 502: backend error', 'sheets.unavailable (HTTP 502)'],
    ['sheets.forbidden: no access to spreadsheet abc (The caller does not have permission): share it', 'sheets.forbidden'],
    ['ECONNRESET: socket hang up', 'ECONNRESET'],
    ['something a connector threw, with jan@example.com in it', 'error'],
    ['', ''],
  ])('%s → %s', (lastError, shown) => {
    expect(publicError(lastError)).toBe(shown);
  });

  it('never shows what follows the code, whatever a receiver answered', () => {
    fc.assert(
      fc.property(fc.constantFrom('webhook.rejected', 'accounting.unavailable'), fc.integer({ min: 100, max: 599 }), fc.string(), (code, status, echo) => {
        const shown = publicError(`${code}: the receiver answered ${status}: ${echo}`);
        expect(shown).toBe(`${code} (HTTP ${status})`);
      }),
    );
  });
});

describe('errorGroup', () => {
  it('groups deliveries that failed the same way, whatever number of attempts each made', () => {
    const after = (n: number) => `expired after ${n} attempts; last error: webhook.unavailable: the receiver answered 500: nope`;
    expect(errorGroup(after(3))).toBe(errorGroup(after(12)));
    expect(errorGroup(after(3))).toBe('webhook.unavailable (HTTP 500); gave up after retrying');
    expect(errorGroup('webhook.rejected: the receiver answered 422: {"email":"a@b.pl"}')).toBe('webhook.rejected (HTTP 422)');
  });
});
