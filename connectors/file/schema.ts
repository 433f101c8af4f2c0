import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';

export const fileConfigSchema = connectorBaseSchema.extend({
  type: z.literal('file'),
  /** Where `<stream>.jsonl` and `roster-YYYY-MM-DD.csv` are written; created when missing. */
  dir: z.string().min(1).default('./data/out'),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
