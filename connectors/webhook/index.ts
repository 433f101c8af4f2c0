import type { Connector } from '../../src/connectors/types.js';
import { postSigned } from '../../src/connectors/signed-post.js';
import { inTrouble, originOf, probe } from '../../src/http/probe.js';
import { webhookConfigSchema, type WebhookConfig } from './schema.js';

/**
 * The `webhook` connector: one signed JSON POST per record to any HTTP endpoint (Zapier, n8n,
 * Make). See README.md for the request a receiver gets and how to verify it. Its URL can be a
 * credential, so what it reports names the URL's origin only.
 */
export const webhookConnector = {
  type: 'webhook',
  configSchema: webhookConfigSchema,

  /** Reachability only: any HTTP answer means the endpoint is there (it cannot verify an unsigned probe). */
  async check(ctx) {
    const answer = await probe(ctx.config.url, { dispatcher: ctx.dispatcher, signal: ctx.signal, timeoutMs: ctx.config.timeoutMs });
    if (!answer.ok) return answer;
    return inTrouble(answer.status) ? { ok: false, reason: `${originOf(ctx.config.url)} answers ${answer.status}` } : { ok: true };
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
} satisfies Connector<WebhookConfig>;
