import type { Config } from './schema.js';

/**
 * What a valid config most likely did not mean: `config check` prints these, `start` logs them. Not
 * errors: each can be meant (a first look at a school, a daemon behind a proxy that rewrites).
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.connectors.length === 0) {
    warnings.push('connectors: none: polls and webhooks are recorded as seen but delivered nowhere (a connector added later gets the snapshot with `resync`)');
  }
  const { host, publicUrl, port } = config.server;
  if (!publicUrl && (host === '0.0.0.0' || host === '::') && config.upstream.baseUrl !== 'sandbox' && config.webhooks.events.length > 0) {
    warnings.push(`server.publicUrl: not set, so the upstream is told to call http://${host === '::' ? '[::]' : host}:${port}/webhooks/v2, an address only this machine reaches; set the URL the upstream reaches this daemon at`);
  }
  return warnings;
}
