import { z } from 'zod';
import { connectorBaseSchema } from '../../src/connectors/base-schema.js';
import { extraHeaders, httpUrl, millis } from '../../src/config/fields.js';

export const webhookConfigSchema = connectorBaseSchema.extend({
  type: z.literal('webhook'),
  url: httpUrl(),
  /** Signs each POST like the upstream signs its own (`Webhook-Signature`). */
  secret: z.string().min(1, 'required: the receiver verifies deliveries with it'),
  /** Extra headers sent with every request (e.g. an API key of the receiving service). */
  headers: extraHeaders(),
  timeoutMs: millis().default(15000),
});

export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
