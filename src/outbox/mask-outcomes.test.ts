import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { secretValues } from '../config/index.js';
import { maskOutcomes } from './mask-outcomes.js';

describe('a connector\'s credentials in its errors', () => {
  const config = {
    name: 'books', type: 'accounting', streams: ['invoices'],
    url: 'https://hooks.zapier.com/hooks/catch/123/abcdef/?k=1', secret: 'signing-secret-1',
    headers: { 'X-Api-Key': 'apikey-SECRET-123', 'X-Tenant': 'ab' },
    ledgerDir: './data/ledger', timezone: 'Europe/Warsaw',
  };

  it('are the secret keys\' values, the header values and a URL\'s path, but no short value', () => {
    expect([...secretValues(config)].sort()).toEqual(['/hooks/catch/123/abcdef/', '/hooks/catch/123/abcdef/?k=1', 'apikey-SECRET-123', 'signing-secret-1']);
    // The path alone and each query value too: a receiver may quote either ("Cannot POST /wh/…").
    expect([...secretValues({ url: 'http://127.0.0.1:19110/wh/secretpath-abc123?tok=QUERY%2DSECRET' })].sort())
      .toEqual(['/wh/secretpath-abc123', '/wh/secretpath-abc123?tok=QUERY%2DSECRET', 'QUERY%2DSECRET', 'QUERY-SECRET']);
    expect([...secretValues({ url: 'https://books.example.com/', headers: {} })]).toEqual([]);
    expect([...secretValues({ url: 'https://bridge:p4ssw0rd-x@books.example.com/' })]).toEqual(['p4ssw0rd-x']);
  });

  it('are masked in every failed outcome\'s message, the longest first; done outcomes and other text stay', () => {
    const shared = new BridgeError('accounting.rejected', 'HTTP 400: invalid key apikey-SECRET-123 for /hooks/catch/123/abcdef/?k=1 (tenant ab)');
    const outcomes = maskOutcomes([
      { status: 'dead', error: shared },
      { status: 'retry', error: shared },
      { status: 'done' },
      { status: 'retry', error: new BridgeError('accounting.unavailable', 'HTTP 503: signing-secret-1signing-secret-1') },
    ], secretValues(config));
    expect(outcomes.map((o) => (o.status === 'done' ? 'done' : o.error.message))).toEqual([
      'HTTP 400: invalid key *** for *** (tenant ab)',
      'HTTP 400: invalid key *** for *** (tenant ab)',
      'done',
      'HTTP 503: ******',
    ]);
    expect((outcomes[0] as { error: BridgeError }).error.code).toBe('accounting.rejected');
  });
});
