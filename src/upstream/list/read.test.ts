import { describe, expect, it } from 'vitest';
import { testStudent } from '../../../test/support/poll.js';
import { readList } from './read.js';

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
}

/** A body of `count` students in one buffer: the worst case, no natural pause between chunks. */
function bigBody(count: number): Buffer {
  const items = Array.from({ length: count }, (_, i) => JSON.stringify(testStudent(i + 1)));
  return Buffer.from(`{"data":{"students":[${items.join(',')}]}}`);
}

describe('readList', () => {
  it('gives every record in order, normalized, across chunk boundaries', async () => {
    const records = await readList('students', chunks('{"data":{"stu', 'dents":[{"id":1,"isActive":"1","user":{"id":10}},{"i', 'd":2,"user":{"id":20}}]}}'));
    expect(records).toEqual([{ id: 1, isActive: 1, user: { id: 10 } }, { id: 2, user: { id: 20 } }]);
  });

  it('lets the event loop run while it works through one huge buffered chunk', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    try {
      // budgetMs 0: yield after every slice, so even a fast machine must let the timer in.
      const records = await readList('students', chunks(bigBody(5_000)), { budgetMs: 0 });
      expect(records).toHaveLength(5_000);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
  });

  it('an element that does not fit its stream rejects the whole list, naming it', async () => {
    await expect(readList('users', chunks('{"data":{"users":[{"id":1},{"id":"2"},{"id":3}]}}'))).rejects.toMatchObject({
      code: 'upstream.invalid_response', context: { path: 'data.users[1].id' },
    });
  });

  it('a body that ends early rejects, whatever was read before', async () => {
    await expect(readList('users', chunks('{"data":{"users":[{"id":1},{"id":2}]'))).rejects.toMatchObject({ code: 'upstream.invalid_json' });
  });

  it('a key listed twice rejects the list', async () => {
    await expect(readList('users', chunks('{"data":{"users":[{"id":1},{"id":1}]}}'))).rejects.toMatchObject({ code: 'upstream.invalid_response' });
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopping'));
    await expect(readList('students', chunks(bigBody(2_000)), { budgetMs: 0, signal: controller.signal })).rejects.toThrow('stopping');
  });
});
