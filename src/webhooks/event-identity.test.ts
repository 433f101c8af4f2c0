import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../canonical.js';
import { JsonNumber, parseExact, RawJson, stringifyExact } from '../json/index.js';
import { parseEventBody } from './event-body.js';
import { eventRecordJson, eventRecords, identifyEvent, inboxIdOf } from './event-identity.js';
import { bodyOf as body, invoice, readBody } from '../../test/support/webhooks.js';

/** The intake's identity before numbers were kept as written: over canonicalJson of the parsed object. */
function earlierId(event: string, object: Record<string, unknown>): string {
  const id = object.id;
  const key = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? String(id) : '_';
  return `${event}:${key}:${sha256Hex(canonicalJson(object)).slice(0, 12)}`;
}

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[2,{"y":null,"z":1}]},"b":1}');
  });

  it('is the same for any key order of the same JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const reordered = JSON.parse(JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v)));
        expect(canonicalJson(reordered)).toBe(canonicalJson(value));
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('identifyEvent', () => {
  it('names the event, the object id and a 12-hex hash of the canonical object', () => {
    const identity = identifyEvent(body('invoice.created', invoice({ id: 123 })));
    expect(identity).toMatchObject({ event: 'invoice.created', key: 123 });
    expect(identity.id).toMatch(/^invoice\.created:123:[0-9a-f]{12}$/);
  });

  it('is the same for a redelivery with keys in another order, different for any change', () => {
    const a = identifyEvent(body('invoice.updated', { id: 5, status: 'paid', total: 10 }));
    expect(identifyEvent(body('invoice.updated', { total: 10, status: 'paid', id: 5 })).id).toBe(a.id);
    expect(identifyEvent(body('invoice.updated', { id: 5, status: 'paid', total: 11 })).id).not.toBe(a.id);
    expect(identifyEvent(body('invoice.created', { id: 5, status: 'paid', total: 10 })).id).not.toBe(a.id);
  });

  it.each([
    ['no id', {}, null, /^x\.y:_:/],
    ['string id', { id: 'A-1' }, 'A-1', /^x\.y:A-1:/],
    ['id with separators is hashed', { id: 'a:b\nc' }, 'a:b\nc', /^x\.y:~[0-9a-f]{12}:[0-9a-f]{12}$/],
    ['object id', { id: { n: 1 } }, null, /^x\.y:_:/],
    ['boolean id', { id: true }, null, /^x\.y:_:/],
  ])('%s', (_name, object, key, pattern) => {
    const identity = identifyEvent(body('x.y', object));
    expect(identity.key).toEqual(key);
    expect(identity.id).toMatch(pattern);
  });

  it('hashes an event name that is not plain', () => {
    expect(identifyEvent(body('weird name\r\n', { id: 1 })).id).toMatch(/^~[0-9a-f]{12}:1:/);
  });

  it('is what it was before for objects whose numbers are written as JavaScript writes them', () => {
    const plainId = fc.oneof(fc.integer(), fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), plainId, (object, id) => {
        const withId = { ...object, id };
        expect(identifyEvent(body('invoice.created', withId)).id).toBe(earlierId('invoice.created', JSON.parse(JSON.stringify(withId)) as Record<string, unknown>));
      }),
    );
  });

  it('tells apart ids and amounts that a double would round or rewrite', () => {
    const a = identifyEvent(readBody('{"event":"invoice.created","object":{"id":9007199254740993}}'));
    const b = identifyEvent(readBody('{"event":"invoice.created","object":{"id":9007199254740992}}'));
    expect(a.id).toMatch(/^invoice\.created:9007199254740993:/);
    expect(a.key).toEqual(new JsonNumber('9007199254740993'));
    expect(b.id).not.toBe(a.id);
    const amount = (literal: string) => identifyEvent(readBody(`{"event":"x.y","object":{"id":1,"total":${literal}}}`)).id;
    expect(new Set(['123.45', '123.4500', '1.2345e2']).size).toBe(new Set(['123.45', '123.4500', '1.2345e2'].map(amount)).size);
  });

  it('is the same for a redelivery written with other whitespace, key order or escapes', () => {
    const a = identifyEvent(readBody('{"event":"x.y","object":{"id":1,"total":1.50,"name":"é"}}'));
    expect(identifyEvent(readBody('{ "object" : { "name" : "\\u00e9" , "total" : 1.50 , "id" : 1 } , "event" : "x.y" }')).id).toBe(a.id);
  });
});

describe('eventRecords', () => {
  const at = '2026-11-22T10:00:00.000Z';
  it('emits events and invoices records for invoice.*, with the object as received', () => {
    const b = body('invoice.created', invoice({ id: 9, extra: { kept: true } }));
    const identity = identifyEvent(b);
    const records = eventRecords(b, identity, at);
    expect(records.map((r) => r.id)).toEqual([`events:${identity.id}`, `invoices:${identity.id}`]);
    expect(records[1]).toEqual({ id: `invoices:${identity.id}`, stream: 'invoices', event: 'invoice.created', key: 9, receivedAt: at, record: new RawJson(b.objectText) });
    expect(JSON.parse(b.objectText)).toEqual(invoice({ id: 9, extra: { kept: true } }));
  });

  it('emits only an events record for other events, and suffixed ids when re-emitted', () => {
    const b = body('lesson.moved', { id: 3 });
    const identity = identifyEvent(b);
    expect(eventRecords(b, identity, at, ':r2').map((r) => `${r.stream} ${r.id}`)).toEqual([`events events:${identity.id}:r2`]);
  });

  it('eventRecordJson is stringifyExact of each record, with the object as its text', () => {
    // An event name is what the intake takes: not blank (parseEventBody turns a blank one away).
    const name = fc.oneof(fc.constantFrom('invoice.created', 'lesson.moved'), fc.string({ minLength: 1, maxLength: 20 }).filter((text) => text.trim() !== ''));
    fc.assert(
      fc.property(name, fc.dictionary(fc.string(), fc.jsonValue()), fc.option(fc.oneof(fc.integer(), fc.double(), fc.string()), { nil: undefined }), fc.constantFrom('', ':r2'), (event, object, id, suffix) => {
        const b = body(event, id === undefined ? object : { ...object, id });
        for (const record of eventRecords(b, identifyEvent(b), at, suffix)) {
          const json = eventRecordJson(record);
          expect(json).toBe(stringifyExact(record));
          expect(json).toBe(JSON.stringify({ ...record, record: JSON.parse(b.objectText) }));
        }
      }),
    );
  });

  it('writes the object and its id exactly as received', () => {
    const b = readBody('{"event":"invoice.created","object":{"id":9007199254740993,"total":123.4500,"rate":1e2}}');
    const [record] = eventRecords(b, identifyEvent(b), at);
    const json = eventRecordJson(record!);
    expect(json).toContain('"key":9007199254740993,');
    expect(json.endsWith(',"record":{"id":9007199254740993,"total":123.4500,"rate":1e2}}')).toBe(true);
    expect(parseExact(json)).toMatchObject({ key: new JsonNumber('9007199254740993'), record: { total: new JsonNumber('123.4500') } });
  });

  it('inboxIdOf accepts an inbox id or any record id of it', () => {
    const id = 'invoice.created:123:0a1b2c3d4e5f';
    for (const name of [id, `events:${id}`, `invoices:${id}`, `invoices:${id}:r3`]) expect(inboxIdOf(name)).toBe(id);
  });
});

describe('parseEventBody', () => {
  const bytes = (text: string) => Buffer.from(text);
  it.each([
    ['empty', ''],
    ['not JSON', 'event=invoice.created'],
    ['JSON string', '"x"'],
    ['JSON array', '[{"event":"a.b","object":{}}]'],
    ['no event', '{"object":{}}'],
    ['blank event', '{"event":"  ","object":{}}'],
    ['numeric event', '{"event":1,"object":{}}'],
    ['over-long event', JSON.stringify({ event: 'e'.repeat(201), object: {} })],
    ['no object', '{"event":"a.b"}'],
    ['null object', '{"event":"a.b","object":null}'],
    ['array object', '{"event":"a.b","object":[]}'],
    ['too deep', `{"event":"a.b","object":${'{"a":'.repeat(70)}1${'}'.repeat(70)}}`],
  ])('rejects %s', (_name, text) => {
    expect(parseEventBody(bytes(text)).ok).toBe(false);
  });

  it('accepts nesting up to 64 levels, the body included, and no deeper, through objects, arrays or "__proto__" keys', () => {
    const nested = (levels: number, open: string, close: string) => `{"event":"a.b","object":{"x":${open.repeat(levels - 2)}1${close.repeat(levels - 2)}}}`;
    for (const [open, close] of [['{"a":', '}'], ['[', ']'], ['{"__proto__":', '}']] as const) {
      expect(parseEventBody(bytes(nested(64, open, close))).ok).toBe(true);
      expect(parseEventBody(bytes(nested(65, open, close))).ok).toBe(false);
    }
  });

  it('rejects invalid UTF-8', () => {
    expect(parseEventBody(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({ ok: false, reason: 'body is not UTF-8' });
  });

  it('accepts an event object with unknown fields, and keeps the body as received', () => {
    const text = '{"event":"a.b", "object":{"id":1,"x":[1.0]},"more":true}';
    expect(parseEventBody(bytes(text))).toEqual({
      ok: true, body: { event: 'a.b', key: 1, objectText: '{"id":1,"x":[1.0]}', canonical: '{"id":1,"x":[1.0]}', text },
    });
  });

  it('gives the object compact, on one line, whatever the whitespace it came with', () => {
    const parsed = parseEventBody(bytes('{\n  "event": "a.b",\n  "object": {\n    "id": "A-1",\n    "x": [ 1.50 ]\n  }\n}'));
    expect(parsed).toMatchObject({ ok: true, body: { key: 'A-1', objectText: '{"id":"A-1","x":[1.50]}' } });
  });

  it('leaves out oneTimePassword at any depth: not stored, not delivered, not hashed', () => {
    const object = { id: 7, user: { login: 'ak', oneTimePassword: 'Xy7!pass', parentUser: { oneTimePassword: 'Pa55-parent' } }, list: [{ oneTimePassword: 'in-array' }] };
    const parsed = parseEventBody(bytes(JSON.stringify({ event: 'student.created', object, oneTimePassword: 'top' })));
    if (!parsed.ok) throw new Error(parsed.reason);
    for (const text of [parsed.body.text, parsed.body.objectText, parsed.body.canonical]) {
      expect(text).not.toMatch(/oneTimePassword|Xy7!pass|Pa55-parent|in-array|top"/);
    }
    expect(JSON.parse(parsed.body.objectText)).toEqual({ id: 7, user: { login: 'ak', parentUser: {} }, list: [{}] });
    expect(identifyEvent(parsed.body).id).toBe(identifyEvent(body('student.created', { id: 7, user: { login: 'ak', parentUser: {} }, list: [{}] })).id);
  });

  it('takes the last of repeated members, as JSON.parse does', () => {
    expect(parseEventBody(bytes('{"event":1,"object":[],"event":"a.b","object":{"id":1,"id":"x"}}'))).toMatchObject({ ok: true, body: { event: 'a.b', key: 'x' } });
  });
});
