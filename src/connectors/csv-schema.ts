import { z } from 'zod';
import { bool } from '../config/fields.js';
import { PEOPLE_CSV, type CsvFormat } from '../csv.js';

/**
 * The `csv` option of a connector that writes CSV files: how they are written. The defaults suit
 * people opening them in a spreadsheet (README, "Files for people"); a machine reader sets
 * `{ bom: false, separator: ",", header: keys, formulas: keep }`.
 */
export const csvFormatSchema = () =>
  z
    .strictObject({
      bom: bool().default(PEOPLE_CSV.bom),
      separator: z.enum([',', ';', '\t'], { error: 'one of ",", ";" or "\\t" (a tab)' }).default(PEOPLE_CSV.separator),
      header: z.enum(['labels', 'keys']).default(PEOPLE_CSV.header),
      formulas: z.enum(['neutralize', 'keep']).default(PEOPLE_CSV.formulas),
    })
    .default({ ...PEOPLE_CSV }) satisfies z.ZodType<CsvFormat>;
