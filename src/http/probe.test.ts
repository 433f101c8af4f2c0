import { describe, expect, it } from 'vitest';
import { inTrouble, originOf, withoutUrl } from './probe.js';

const URL_WITH_SECRETS = 'https://user:pa55-s3cr3t@hooks.example.com/hooks/catch/123/s3cr3t-path/?token=q-s3cr3t';

describe('originOf', () => {
  it.each([
    [URL_WITH_SECRETS, 'https://hooks.example.com'],
    ['http://127.0.0.1:8080/x', 'http://127.0.0.1:8080'],
    ['not a url', 'the configured URL'],
  ])('%s → %s', (url, origin) => {
    expect(originOf(url)).toBe(origin);
  });
});

describe('withoutUrl', () => {
  it('names the URL by its origin and leaves out its path, query and password', () => {
    const text = `request to ${URL_WITH_SECRETS} failed (path /hooks/catch/123/s3cr3t-path/?token=q-s3cr3t, password pa55-s3cr3t)`;
    const shown = withoutUrl(text, URL_WITH_SECRETS);
    expect(shown).toBe('request to https://hooks.example.com failed (path …, password …)');
    for (const secret of ['s3cr3t-path', 'q-s3cr3t', 'pa55-s3cr3t']) expect(shown).not.toContain(secret);
  });

  it('leaves out the path alone and each query value, as a receiver may quote them', () => {
    const shown = withoutUrl('Cannot POST /hooks/catch/123/s3cr3t-path/ (token q-s3cr3t)', URL_WITH_SECRETS);
    expect(shown).toBe('Cannot POST … (token …)');
  });

  it('leaves a text without the URL as it is', () => {
    expect(withoutUrl('connect ECONNREFUSED 127.0.0.1:9', URL_WITH_SECRETS)).toBe('connect ECONNREFUSED 127.0.0.1:9');
  });
});

describe('inTrouble', () => {
  it('takes a 501 to its HEAD for an endpoint that is there, and other 5xx for trouble', () => {
    expect([500, 501, 502, 503, 404, 405].map(inTrouble)).toEqual([true, false, true, true, false, false]);
  });
});
