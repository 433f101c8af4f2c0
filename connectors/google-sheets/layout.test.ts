import { describe, expect, it } from 'vitest';
import { placeCells, resolveHeader } from './layout.js';

const titles = ['id', 'First name', 'Last name', 'record id'];

describe('resolveHeader', () => {
  it('writes the whole header into an empty row', () => {
    expect(resolveHeader([], titles)).toEqual({ ok: true, positions: [0, 1, 2, 3], writes: titles.map((title, col) => ({ col, title })) });
    expect(resolveHeader(['', ' '], titles)).toMatchObject({ ok: true, positions: [0, 1, 2, 3] });
  });

  it.each([
    ['in order', ['id', 'First name', 'Last name', 'record id'], [0, 1, 2, 3], []],
    ['reordered by a user', ['Last name', 'id', 'record id', 'First name'], [1, 3, 0, 2], []],
    ['with a user column between ours', ['id', 'Notes', 'First name', 'Last name', 'record id'], [0, 2, 3, 4], []],
    ['case and spaces changed', [' ID ', 'first NAME', 'Last name', 'Record Id'], [0, 1, 2, 3], []],
    ['a title renamed: re-added at the end', ['id', 'Given name', 'Last name', 'record id'], [0, 4, 2, 3], [{ col: 4, title: 'First name' }]],
    ['a duplicate title: the first wins', ['id', 'First name', 'First name', 'Last name', 'record id'], [0, 1, 3, 4], []],
  ])('header %s', (_, header, positions, writes) => {
    expect(resolveHeader(header, titles)).toEqual({ ok: true, positions, writes });
  });

  it('refuses a non-empty header without the id column', () => {
    const result = resolveHeader(['Student', 'First name'], titles);
    expect(result.ok).toBe(false);
  });
});

describe('placeCells', () => {
  it('puts cells at their positions and null (skip) elsewhere', () => {
    expect(placeCells([1, 'a', 'b'], [0, 3, 1])).toEqual([1, 'b', null, 'a']);
  });
});
