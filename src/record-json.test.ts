import { describe, expect, it } from 'vitest';
import { knownJson, rememberJson } from './record-json.js';
import type { EventRecord } from './records.js';

const record = (): EventRecord => ({ id: 'events:invoice.created:1:abc', stream: 'events', event: 'invoice.created', key: 1, receivedAt: '2026-11-22T00:00:00.000Z', record: { id: 1, note: 'ż"\n' } });

describe('record JSON', () => {
  it('is known once filed, per record object (not per content)', () => {
    const r = record();
    expect(knownJson(r)).toBeUndefined();
    rememberJson(r, JSON.stringify(r));
    expect(knownJson(r)).toBe(JSON.stringify(r));
    expect(knownJson(record())).toBeUndefined();
  });
});
