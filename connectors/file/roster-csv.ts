import path from 'node:path';
import { csvLines, type CsvFormat } from '../../src/csv.js';
import { ROSTER_COLUMNS, ROSTER_LABELS, type RosterRecord } from '../../src/records.js';
import { writeFileAtomic } from '../../src/files/durable.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function rosterFileName(record: RosterRecord): string | undefined {
  return DATE.test(record.date) ? `roster-${record.date}.csv` : undefined;
}

/** The roster as CSV lines: a header row of ROSTER_COLUMNS (as keys or labels), one row per student. */
export function rosterCsv(record: RosterRecord, format: CsvFormat): Iterable<string> {
  return csvLines(ROSTER_COLUMNS, record.rows, format, ROSTER_LABELS);
}

/**
 * Writes a roster export as `<dir>/roster-YYYY-MM-DD.csv` in the connector's CSV format. Atomic: a
 * reader sees the previous file or the new one, whole, and writing the same export twice leaves
 * the same file.
 */
export async function writeRosterCsv(dir: string, record: RosterRecord, format: CsvFormat): Promise<string> {
  const name = rosterFileName(record);
  if (!name) throw new Error(`roster record ${record.id} has no YYYY-MM-DD date`);
  const file = path.join(dir, name);
  await writeFileAtomic(file, rosterCsv(record, format));
  return file;
}
