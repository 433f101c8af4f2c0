import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createListCache, type ListBody } from './list-cache.js';

async function text(body: ListBody): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body.chunks) parts.push(chunk);
  const whole = Buffer.concat(parts);
  if (body.length !== undefined) expect(body.length).toBe(whole.length);
  return whole.toString('utf8');
}

type Row = { id: number; name: string };

describe('ListCache', () => {
  it('always serves exactly the current list, whatever changes come between reads', async () => {
    const change = fc.oneof(
      fc.record({ op: fc.constant('rename' as const), at: fc.nat(), name: fc.string() }),
      fc.record({ op: fc.constant('append' as const), name: fc.string() }),
      fc.record({ op: fc.constant('remove' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.array(change, { maxLength: 12 }), fc.integer({ min: 1, max: 7 }), async (count, changes, chunkSize) => {
        const rows: Row[] = Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `n${i}` }));
        const cache = createListCache<Row>(['data', 'rows'], (row) => ({ ...row }), chunkSize);
        let nextId = count + 1;
        expect(JSON.parse(await text(cache.body(rows)))).toEqual({ data: { rows } });
        for (const step of changes) {
          if (step.op === 'append') {
            rows.push({ id: nextId++, name: step.name });
            cache.invalidate(rows.length - 1);
          } else if (rows.length > 0) {
            const at = step.at % rows.length;
            if (step.op === 'rename') {
              rows[at]!.name = step.name;
              cache.invalidate(at);
            } else {
              rows.splice(at, 1);
              cache.invalidateFrom(at);
            }
          }
          expect(JSON.parse(await text(cache.body(rows)))).toEqual({ data: { rows } });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('knows the length once every chunk is cached', async () => {
    const cache = createListCache<Row>(['data', 'rows'], (row) => row, 2);
    const rows = [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'c' }];
    expect(cache.body(rows).length).toBeUndefined();
    await text(cache.body(rows));
    expect(cache.body(rows).length).toBe(Buffer.byteLength(JSON.stringify({ data: { rows } })));
  });
});
