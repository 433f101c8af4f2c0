import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSegment, encodeNumber, withSourcesOnly } from './source-map-of-sources.mjs';

/** A segment with absolute positions: generated line and column, then source, line, column and name, if mapped. */
type Entry = number[];

/** Source map `mappings` of entries in generated order, encoded as the format says (deltas). */
function mappingsOf(entries: Entry[]): string {
  const lines: string[][] = [];
  const last = [0, 0, 0, 0];
  let line = -1;
  let column = 0;
  for (const [l = 0, c = 0, ...rest] of entries) {
    while (line < l) {
      lines.push([]);
      line += 1;
      column = 0;
    }
    let text = encodeNumber(c - column);
    column = c;
    rest.forEach((value, i) => {
      text += encodeNumber(value - last[i]!);
      last[i] = value;
    });
    lines[line]!.push(text);
  }
  return lines.map((segments) => segments.join(',')).join(';');
}

/** The entries of `mappings`, with absolute positions. */
function entriesOf(mappings: string): Entry[] {
  const entries: Entry[] = [];
  const last = [0, 0, 0, 0];
  mappings.split(';').forEach((text, line) => {
    let column = 0;
    for (const segment of text.split(',').filter(Boolean)) {
      const [c, ...rest] = decodeSegment(segment);
      column += c!;
      entries.push([line, column, ...rest.map((delta, i) => (last[i]! += delta))]);
    }
  });
  return entries;
}

const SOURCES = ['../../../src/a.ts', '../../pkg/index.js', '../../../src/b.ts', '../../other/lib.js'];
const own = (source: string) => source.includes('/src/');

describe('source-map-of-sources', () => {
  it('encodes and decodes any number of a segment as base64 VLQ', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -(2 ** 30), max: 2 ** 30 }), { minLength: 1, maxLength: 5 }), (numbers) => {
      expect(decodeSegment(numbers.map(encodeNumber).join(''))).toEqual(numbers);
    }));
    expect(encodeNumber(0)).toBe('A');
    expect(encodeNumber(16)).toBe('gB');
    expect(decodeSegment('AAgBC')).toEqual([0, 0, 16, 1]);
  });

  it("keeps the own sources' segments where they were, and leaves each run of the others unmapped", () => {
    const entries: Entry[] = [
      [0, 0, 0, 0, 0],
      [0, 10, 1, 5, 2, 0],
      [0, 20, 1, 6, 0],
      [1, 0, 1, 7, 0],
      [1, 4, 2, 3, 1, 1],
      [2, 0],
      [2, 8, 0, 9, 4],
      [3, 2, 3, 0, 0],
    ];
    const kept = withSourcesOnly({ version: 3, sources: SOURCES, names: ['x', 'y'], mappings: mappingsOf(entries) }, own);
    expect(kept.sources).toEqual(['../../../src/a.ts', '../../../src/b.ts']);
    expect(kept.names).toEqual(['x', 'y']);
    expect(entriesOf(kept.mappings)).toEqual([
      [0, 0, 0, 0, 0],
      [0, 10],
      [1, 4, 1, 3, 1, 1],
      [2, 0],
      [2, 8, 0, 9, 4],
      [3, 2],
    ]);
  });

  it('maps every position of an own source as before, and no position of the others to a source', () => {
    const entry = fc.tuple(fc.nat(3), fc.nat(50), fc.nat(200), fc.nat(80), fc.option(fc.nat(3), { nil: undefined }), fc.boolean());
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(40), fc.nat(120), entry), { maxLength: 60 }), (raw) => {
      // Segments in generated order, unique positions; some unmapped.
      const seen = new Set<string>();
      const entries = raw
        .map(([line, column, [source, l, c, name, unmapped]]): Entry => (unmapped ? [line, column] : name === undefined ? [line, column, source, l, c] : [line, column, source, l, c, name]))
        .filter(([line, column]) => !seen.has(`${line}:${column}`) && seen.add(`${line}:${column}`))
        .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
      const kept = withSourcesOnly({ version: 3, sources: SOURCES, names: ['a', 'b', 'c', 'd'], mappings: mappingsOf(entries) }, own);
      const renamed = new Map([[0, 0], [2, 1]]);
      const expected: Entry[] = [];
      let unmapped = true;
      for (const e of entries) {
        if (e.length > 2 && renamed.has(e[2]!)) {
          expected.push([e[0]!, e[1]!, renamed.get(e[2]!)!, ...e.slice(3)]);
          unmapped = false;
        } else if (!unmapped) {
          expected.push([e[0]!, e[1]!]);
          unmapped = true;
        }
      }
      expect(entriesOf(kept.mappings)).toEqual(expected);
    }));
  });
});
