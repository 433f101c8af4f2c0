import { describe, expect, it } from 'vitest';
import { knownJson, recordJson } from './record-json.js';
import type { EventRecord } from './records.js';

const record = (): EventRecord => ({ id: 'events:invoice.created:1:abc', stream: 'events', event: 'invoice.created', key: 1, receivedAt: '2026-11-22T00:00:00.000Z', record: { id: 1, note: 'ż"\n' } });

describe('record JSON', () => {
  it('is JSON.stringify of the record, made once and then known', () => {
    const r = record();
    expect(knownJson(r)).toBeUndefined();
    const text = recordJson(r);
    expect(text).toBe(JSON.stringify(r));
    expect(knownJson(r)).toBe(text);
    expect(recordJson(r)).toBe(text);
    expect(knownJson(record())).toBeUndefined(); // per object, not per content
  });
});
