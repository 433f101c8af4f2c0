import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactPersonalText } from './redact-text.js';

describe('redactPersonalText', () => {
  it.each([
    [
      'webhook.rejected: the receiver answered 422: {"error":"invalid","invoice":{"id":1001,"buyerName":"Jan Kowalski","email":"jan.k@example.com","pesel":"85010112345","total":12.5}}',
      'webhook.rejected: the receiver answered 422: {"error":"invalid","invoice":{"id":1001,"buyerName":"[redacted]","email":"[redacted]","pesel":"[redacted]","total":12.5}}',
    ],
    ['cut short: {"firstName": "Anna", "lastName": "Nowa', 'cut short: {"firstName": "[redacted]", "lastName": "[redacted]"'],
    ['answered 400: buyer_name=Jan+Kowalski&amount=10&phone=600100200', 'answered 400: buyer_name=[redacted]&amount=10&phone=[redacted]'],
    ['duplicate customer jan.k@example.com (PESEL 85010112345)', 'duplicate customer [email] (PESEL [redacted])'],
    ['webhook.network: connect ECONNREFUSED 127.0.0.1:9', 'webhook.network: connect ECONNREFUSED 127.0.0.1:9'],
    ['record invoices:invoice.created:1001:0a1b2c3d4e5f failed', 'record invoices:invoice.created:1001:0a1b2c3d4e5f failed'],
    // An update's changes echoed back: the field is named by `path`, so its `from` and `to` go.
    [
      'answered 422: {"changes":[{"path":"user.additionalData.phone","from":"ffdfff","to":"+48 600 111 222"},{"path":"user.fullname","from":"Maciej K","to":["Maciej","Ż"]},{"path":"user.isArchived","from":false,"to":true}]}',
      'answered 422: {"changes":[{"path":"user.additionalData.phone","from":"[redacted]","to":"[redacted]"},{"path":"user.fullname","from":"[redacted]","to":"[redacted]"},{"path":"user.isArchived","from":false,"to":true}]}',
    ],
  ])('%s', (text, expected) => {
    expect(redactPersonalText(text)).toBe(expected);
  });

  it('leaves no e-mail address or PESEL of an echoed invoice, however it is cut', () => {
    const echo = JSON.stringify({ error: 'rejected', invoice: { buyer: 'Jan Kowalski', email: 'jan.kowalski@example.com', pesel: '85010112345' } });
    fc.assert(
      fc.property(fc.nat(echo.length), (cut) => {
        const text = redactPersonalText(`the receiver answered 422: ${echo.slice(0, cut)}`);
        expect(text).not.toMatch(/jan\.kowalski@example\.com|85010112345|Jan Kowalski/);
      }),
    );
  });

  it('leaves no value of a personal field\'s change, however the echo is cut', () => {
    const echo = JSON.stringify({ error: 'rejected', changes: [{ path: 'user.lastName', from: 'Kołodziej', to: 'Żółkiewska' }, { path: 'user.additionalData.phone', from: '600 111 222', to: '+48 600 111 333' }] });
    fc.assert(
      fc.property(fc.nat(echo.length), (cut) => {
        const text = redactPersonalText(`the receiver answered 422: ${echo.slice(0, cut)}`);
        expect(text).not.toMatch(/Kołodziej|Żółkiewska|600 111/);
      }),
    );
  });
});
