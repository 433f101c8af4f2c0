import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { separatorOf } from '../../connectors/accounting/csv-read.js';
import { LEDGER_LABELS } from '../../connectors/accounting/ledger-row.js';

const keyOf = new Map(Object.entries(LEDGER_LABELS).map(([key, label]) => [label, key]));

/**
 * A ledger file's rows by column key, read with a standard CSV parser whichever format wrote it
 * (for people: a byte order mark, ";", labels; for machines: RFC 4180 with the keys).
 */
export async function readLedgerRows(file: string): Promise<Record<string, string>[]> {
  const text = await readFile(file, 'utf8');
  const columns = (header: string[]) => header.map((name) => keyOf.get(name) ?? name);
  return parse(text, { columns, bom: true, delimiter: separatorOf(text.replace(/^\uFEFF/, '')), relax_quotes: false }) as Record<string, string>[];
}
