import { request } from 'undici';
import type { Connector } from '../../src/connectors/types.js';
import { describeError } from '../../src/errors.js';
import { postSigned } from '../../src/connectors/signed-post.js';
import { webhookConfigSchema, type WebhookConfig } from './schema.js';

/**
 * The `webhook` connector (CONTRACT §4): one signed JSON POST per record to any HTTP endpoint
 * (Zapier, n8n, Make). See README.md for the request a receiver gets and how to verify it.
 */
export const webhookConnector: Connector<WebhookConfig> = {
  type: 'webhook',
  configSchema: webhookConfigSchema,

  /** Reachability only: any HTTP answer means the endpoint is there (it cannot verify an unsigned probe). */
  async check(ctx) {
    try {
      const response = await request(ctx.config.url, {
        method: 'HEAD',
        dispatcher: ctx.dispatcher,
        signal: ctx.signal,
        headersTimeout: ctx.config.timeoutMs,
        bodyTimeout: ctx.config.timeoutMs,
      });
      await response.body.dump();
      return response.statusCode >= 500
        ? { ok: false, reason: `${ctx.config.url} answers ${response.statusCode}` }
        : { ok: true };
    } catch (error) {
      return { ok: false, reason: `${ctx.config.url} unreachable: ${describeError(error)}` };
    }
  },

  async deliver(ctx, records) {
    const outcomes = [];
    for (const record of records) {
      outcomes.push(
        await postSigned(record.id, record.json, {
          url: ctx.config.url,
          secret: ctx.config.secret,
          headers: ctx.config.headers,
          timeoutMs: ctx.config.timeoutMs,
          dispatcher: ctx.dispatcher,
          signal: ctx.signal,
          now: ctx.clock.now(),
        }),
      );
    }
    return outcomes;
  },
};
