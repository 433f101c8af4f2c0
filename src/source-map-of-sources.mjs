// The bundle's source map, kept to the project's own sources (src/load-typescript.mjs): the first
// stack trace a process formats makes Node.js parse the whole map, and the packages' code, four
// fifths of the bundle, would make most of it. A frame in a package then reads as the bundle's line.

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGITS = new Map([...BASE64].map((char, value) => [char, value]));

/** The numbers of one segment of a source map's `mappings` (base64 VLQ). */
export function decodeSegment(text) {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGITS.get(char);
    if (digit === undefined) throw new Error(`not a base64 VLQ digit: ${char}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}

/** One number as base64 VLQ. */
export function encodeNumber(number) {
  let rest = number < 0 ? (-number << 1) | 1 : number << 1;
  let text = '';
  do {
    const digit = rest & 31;
    rest >>>= 5;
    text += BASE64[rest > 0 ? digit | 32 : digit];
  } while (rest > 0);
  return text;
}

/**
 * `map` (a source map, version 3) with the segments of sources that `keep` refuses made unmapped: a
 * run of them becomes one segment with no source, so that a position in it maps to nothing rather
 * than to the kept segment before it. The refused sources leave the list.
 */
export function withSourcesOnly(map, keep) {
  const index = [];
  const sources = [];
  map.sources.forEach((source, i) => {
    if (keep(source)) {
      index[i] = sources.length;
      sources.push(source);
    }
  });
  // The fields are deltas: from the previous segment on the line (the column), or in the whole map.
  const read = { source: 0, line: 0, column: 0, name: 0 };
  const written = { source: 0, line: 0, column: 0, name: 0 };
  let unmapped = true;
  const lines = map.mappings.split(';').map((line) => {
    let column = 0;
    let writtenColumn = 0;
    const out = [];
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const [columnDelta, sourceDelta, lineDelta, sourceColumnDelta, nameDelta] = decodeSegment(segment);
      column += columnDelta;
      const mapped = sourceDelta !== undefined;
      if (mapped) {
        read.source += sourceDelta;
        read.line += lineDelta;
        read.column += sourceColumnDelta;
        if (nameDelta !== undefined) read.name += nameDelta;
      }
      if (!mapped || index[read.source] === undefined) {
        if (!unmapped) {
          out.push(encodeNumber(column - writtenColumn));
          writtenColumn = column;
        }
        unmapped = true;
        continue;
      }
      let text = encodeNumber(column - writtenColumn) + encodeNumber(index[read.source] - written.source) +
        encodeNumber(read.line - written.line) + encodeNumber(read.column - written.column);
      if (nameDelta !== undefined) {
        text += encodeNumber(read.name - written.name);
        written.name = read.name;
      }
      writtenColumn = column;
      written.source = index[read.source];
      written.line = read.line;
      written.column = read.column;
      unmapped = false;
      out.push(text);
    }
    return out.join(',');
  });
  const kept = { ...map, sources, mappings: lines.join(';') };
  if (map.sourcesContent) kept.sourcesContent = map.sourcesContent.filter((_, i) => index[i] !== undefined);
  return kept;
}
