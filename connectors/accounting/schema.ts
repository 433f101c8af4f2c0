import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
import { httpUrl, int } from '../../src/config/fields.js';

export const accountingConfigSchema = connectorBaseSchema.extend({
  type: z.literal('accounting'),
  url: httpUrl(),
  /** Signs each POST like the upstream signs its own (`Webhook-Signature`). */
  secret: z.string().min(1, 'required: the accounting system verifies deliveries with it'),
  /** With it, one CSV row per invoice version is appended to `<ledgerDir>/ledger-YYYY-MM-DD.csv`. */
  ledgerDir: z.string().min(1).optional(),
  /** The school's timezone for the ISO 8601 dates in the feed (defaults to poll.timezone). */
  timezone: z.string().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: int({ min: 1 }).default(15000),
});

export type AccountingConfig = z.infer<typeof accountingConfigSchema>;
