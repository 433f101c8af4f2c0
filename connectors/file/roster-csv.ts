import path from 'node:path';
import { csvLines } from '../../src/csv.js';
import { ROSTER_COLUMNS, type RosterRecord } from '../../src/records.js';
import { writeFileAtomic } from '../../src/files/durable.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function rosterFileName(record: RosterRecord): string | undefined {
  return DATE.test(record.date) ? `roster-${record.date}.csv` : undefined;
}

/**
 * Writes a roster export as `<dir>/roster-YYYY-MM-DD.csv` (RFC 4180, UTF-8 without BOM, header row of
 * ROSTER_COLUMNS, one row per student). Atomic: a reader sees the previous file or the new one, whole,
 * and writing the same export twice leaves the same file.
 */
export async function writeRosterCsv(dir: string, record: RosterRecord): Promise<string> {
  const name = rosterFileName(record);
  if (!name) throw new Error(`roster record ${record.id} has no YYYY-MM-DD date`);
  const file = path.join(dir, name);
  await writeFileAtomic(file, csvLines(ROSTER_COLUMNS, record.rows));
  return file;
}
