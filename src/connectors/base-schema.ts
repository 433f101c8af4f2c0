import { z } from 'zod';
import { STREAMS } from '../records.js';

/** What every connector's config has (docs/connectors.md); each type extends it with its own options. */
export const connectorBaseSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "." and "-" only'),
  streams: z.array(z.enum(STREAMS)).min(1, 'list at least one stream'),
});
