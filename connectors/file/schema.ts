import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
import { csvFormatSchema } from '../../src/connectors/csv-schema.js';

export const fileConfigSchema = connectorBaseSchema.extend({
  type: z.literal('file'),
  /** Where `<stream>.jsonl` and `roster-YYYY-MM-DD.csv` are written; created when missing. */
  dir: z.string().min(1).default('./data/out'),
  /** How the roster CSV is written; the defaults are for people (README.md). */
  csv: csvFormatSchema(),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
