import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseMultipart, parseUrlEncoded } from './form.js';

/** Bodies made by the platform's own FormData encoder, so the parser is checked against the real thing. */
async function encode(fields: Record<string, string>): Promise<{ body: Buffer; contentType: string }> {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) data.append(key, value);
  const response = new Response(data);
  return { body: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type') ?? '' };
}

describe('parseMultipart', () => {
  it('reads what FormData writes, whatever the values (diacritics, CRLF, dashes)', async () => {
    const key = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,12}$/);
    const value = fc.oneof(fc.string(), fc.constantFrom('Łucja Wąsik', 'a\r\nb', '--boundary--', '', ' 01-123 '));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, value, { maxKeys: 6 }), async (fields) => {
        const { body, contentType } = await encode(fields);
        // FormData normalizes line breaks in values to CRLF.
        const expected = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.replace(/\r?\n|\r/g, '\r\n')]));
        expect(parseMultipart(body, contentType)).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it.each([
    ['no boundary', 'multipart/form-data', 'x'],
    ['foreign boundary', 'multipart/form-data; boundary=abc', '--zzz\r\n\r\n'],
    ['unclosed', 'multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n'],
    ['part without name', 'multipart/form-data; boundary=abc', '--abc\r\nContent-Type: text/plain\r\n\r\n1\r\n--abc--'],
  ])('rejects a body with %s', (_what, contentType, body) => {
    expect(() => parseMultipart(Buffer.from(body), contentType)).toThrow();
  });
});

describe('parseUrlEncoded', () => {
  it.each([
    ['firstname=%C5%81ucja&lastname=W%C4%85sik', { firstname: 'Łucja', lastname: 'Wąsik' }],
    ['grant_type=client_credentials', { grant_type: 'client_credentials' }],
    ['a=1+2&b=', { a: '1 2', b: '' }],
    ['', {}],
  ])('%s', (body, expected) => {
    expect(parseUrlEncoded(body)).toEqual(expected);
  });
});
