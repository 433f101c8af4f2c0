import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../canonical.js';
import { parseEventBody, type EventBody } from './event-body.js';
import { eventRecordJson, eventRecords, identifyEvent, inboxIdOf } from './event-identity.js';
import { invoice } from './testing.js';

const body = (event: string, object: Record<string, unknown>): EventBody => ({ event, object });

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
});

describe('eventRecords', () => {
  const at = '2026-11-22T10:00:00.000Z';
  it('emits events and invoices records for invoice.*, with the object as received', () => {
    const b = body('invoice.created', invoice({ id: 9, extra: { kept: true } }));
    const identity = identifyEvent(b);
    const records = eventRecords(b, identity, at);
    expect(records.map((r) => r.id)).toEqual([`events:${identity.id}`, `invoices:${identity.id}`]);
    expect(records[1]).toEqual({ id: `invoices:${identity.id}`, stream: 'invoices', event: 'invoice.created', key: 9, receivedAt: at, record: b.object });
  });

  it('emits only an events record for other events, and suffixed ids when re-emitted', () => {
    const b = body('lesson.moved', { id: 3 });
    const identity = identifyEvent(b);
    expect(eventRecords(b, identity, at, ':r2').map((r) => `${r.stream} ${r.id}`)).toEqual([`events events:${identity.id}:r2`]);
  });

  it('eventRecordJson is exactly JSON.stringify of each record, from its object serialized once', () => {
    const name = fc.oneof(fc.constantFrom('invoice.created', 'lesson.moved'), fc.string({ minLength: 1, maxLength: 20 }));
    fc.assert(
      fc.property(name, fc.dictionary(fc.string(), fc.jsonValue()), fc.option(fc.oneof(fc.integer(), fc.double(), fc.string()), { nil: undefined }), fc.constantFrom('', ':r2'), (event, object, id, suffix) => {
        const b: EventBody = { event, object: id === undefined ? object : { ...object, id } };
        const objectJson = JSON.stringify(b.object);
        for (const record of eventRecords(b, identifyEvent(b), at, suffix)) expect(eventRecordJson(record, objectJson)).toBe(JSON.stringify(record));
      }),
    );
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

  it('accepts an event object with unknown fields', () => {
    const text = '{"event":"a.b","object":{"id":1,"x":[1]},"more":true}';
    expect(parseEventBody(bytes(text))).toEqual({ ok: true, body: { event: 'a.b', object: { id: 1, x: [1] } }, text });
  });
});
