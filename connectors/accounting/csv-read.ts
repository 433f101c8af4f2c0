import { BOM } from '../../src/csv.js';

/**
 * Reads back the ledger's own CSV files (the ledger rebuilds its set of written record ids from
 * them), with the separator they were written with; a leading byte order mark is not part of the
 * first field. A crash can leave the last row half-written; `completeLength` says where the last
 * complete row ends (in UTF-16 code units of `text`) so the torn tail can be cut off before appending
 * again. A row is complete once its terminating line break (CRLF, LF or CR) is read outside quotes.
 */
export interface CsvReadResult {
  rows: string[][];
  /** Length of the prefix of `text` made of complete rows. */
  completeLength: number;
}

export function readCsv(text: string, separator = ','): CsvReadResult {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let completeLength = 0;
  let i = text.startsWith(BOM) ? BOM.length : 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else field += ch;
      i += 1;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === separator) {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      // A CR as the very last character may be the first half of a CRLF cut by a crash.
      if (ch === '\r' && i + 1 === text.length) break;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      completeLength = i;
      continue;
    } else field += ch;
    i += 1;
  }
  return { rows, completeLength };
}

/** The separator of a file this connector wrote: the first one its header row holds. */
export function separatorOf(text: string): ',' | ';' | '\t' {
  const header = text.split(/[\r\n]/, 1)[0] ?? '';
  const found = /[,;\t]/.exec(header)?.[0];
  return found === ';' || found === '\t' ? found : ',';
}
