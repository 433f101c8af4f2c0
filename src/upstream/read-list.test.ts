import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { readList } from './read-list.js';

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

/** A body of `count` students in one buffer: the worst case, no natural pause between chunks. */
function bigBody(count: number): Buffer {
  const items = Array.from({ length: count }, (_, id) => JSON.stringify({ id, user: { id, note: 'x'.repeat(200) } }));
  return Buffer.from(`{"data":{"students":[${items.join(',')}]}}`);
}

describe('readList', () => {
  it('maps every element in order with its index', async () => {
    const seen: number[] = [];
    const items = await readList(chunks('{"data":{"stu', 'dents":[{"id":1},{"i', 'd":2}]}}'), {
      path: ['data', 'students'],
      map: (value, index) => {
        seen.push(index);
        return (value as { id: number }).id;
      },
    });
    expect(items).toEqual([1, 2]);
    expect(seen).toEqual([0, 1]);
  });

  it('lets the event loop run while it works through one huge buffered chunk', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    try {
      // budgetMs 0: yield after every slice, so even a fast machine must let the timer in.
      const items = await readList(chunks(bigBody(20_000)), { path: ['data', 'students'], map: (v) => v, budgetMs: 0 });
      expect(items).toHaveLength(20_000);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
  });

  it('a mapping error rejects the whole list', async () => {
    const error = new BridgeError('upstream.invalid_response', 'bad');
    await expect(
      readList(chunks('{"data":{"students":[1,2,3]}}'), {
        path: ['data', 'students'],
        map: (value) => {
          if (value === 2) throw error;
          return value;
        },
      }),
    ).rejects.toBe(error);
  });

  it('a body that ends early rejects, whatever was read before', async () => {
    await expect(readList(chunks('{"data":{"students":[1,2,3]'), { path: ['data', 'students'], map: (v) => v })).rejects.toMatchObject({
      code: 'upstream.invalid_json',
    });
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopping'));
    await expect(
      readList(chunks(bigBody(5_000)), { path: ['data', 'students'], map: (v) => v, budgetMs: 0, signal: controller.signal }),
    ).rejects.toThrow('stopping');
  });
});
