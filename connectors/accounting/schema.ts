import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
import { csvFormatSchema } from '../../src/connectors/csv-schema.js';
import { extraHeaders, httpUrl, millis, timezone } from '../../src/config/fields.js';

export const accountingConfigSchema = connectorBaseSchema.extend({
  type: z.literal('accounting'),
  /** Only invoice records make sense here (docs/records.md: `invoices` carries the verified `invoice.*` events). */
  streams: z
    .array(z.literal('invoices', { error: 'the accounting connector takes only the "invoices" stream' }))
    .min(1, 'list at least one stream')
    .default(['invoices']),
  url: httpUrl(),
  /** Signs each POST like the upstream signs its own (`Webhook-Signature`). */
  secret: z.string().min(1, 'required: the accounting system verifies deliveries with it'),
  /** With it, one CSV row per invoice version is appended to `<ledgerDir>/ledger-YYYY-MM-DD.csv`. */
  ledgerDir: z.string().min(1).optional(),
  /** How new ledger files are written; the defaults are for people (README.md). */
  csv: csvFormatSchema(),
  /**
   * The school's timezone: upstream date-times carry no zone and are read as wall-clock time here; the
   * feed's ISO 8601 dates and the ledger's file dates use it.
   */
  timezone: timezone().default('Europe/Warsaw'),
  /** Extra headers sent with every request (e.g. an API key of the accounting system). */
  headers: extraHeaders(),
  timeoutMs: millis().default(15000),
});

export type AccountingConfig = z.infer<typeof accountingConfigSchema>;
