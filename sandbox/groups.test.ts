import { describe, expect, it } from 'vitest';
import { createGroupBook, seedGroups } from './groups.js';
import type { ListBody } from './list-cache.js';

async function text(body: ListBody): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body.chunks) parts.push(chunk);
  return Buffer.concat(parts).toString('utf8');
}

describe('the sandbox groups', () => {
  it('are seeded: the same seed gives the same groups, ids ascending, teachers among the administrators', () => {
    const groups = seedGroups(7);
    expect(seedGroups(7)).toEqual(groups);
    expect(seedGroups(8)).not.toEqual(groups);
    expect(groups.map((g) => g.id)).toEqual([1, 2, 3, 4, 5]);
    expect(groups.every((g) => g.teacherUserId === null || [1, 2, 3].includes(g.teacherUserId))).toBe(true);
  });

  it('are listed as GET /api/v2/groups answers, with every change, a new group last', async () => {
    let changes = 0;
    const book = createGroupBook(1, () => (changes += 1));
    expect(JSON.parse(await text(book.body()))).toEqual({ data: { groups: book.list() } });
    const created = book.create({ name: 'Włoski A1' }, '2026-01-02 10:00:00');
    book.update(2, { teacherUserId: null }, '2026-01-03 10:00:00');
    book.remove(1);
    const listed = JSON.parse(await text(book.body())) as { data: { groups: { id: number; teacherUserId: number | null; updatedAt: string }[] } };
    expect(listed.data.groups.map((g) => g.id)).toEqual([2, 3, 4, 5, created.id]);
    expect(listed.data.groups[0]).toMatchObject({ id: 2, teacherUserId: null, updatedAt: '2026-01-03 10:00:00' });
    expect(changes).toBe(3);
    expect(() => book.update(1, { name: 'x' }, '2026-01-04 10:00:00')).toThrow(expect.objectContaining({ code: 'sandbox.not_found', status: 404 }));
  });

  it('are restored from what they saved, next id included', () => {
    const book = createGroupBook(1);
    book.create({}, '2026-01-02 10:00:00');
    const again = createGroupBook(1);
    again.restore(structuredClone(book.saved()));
    expect(again.list()).toEqual(book.list());
    expect(again.create({}, '2026-01-05 10:00:00').id).toBe(7);
  });
});
