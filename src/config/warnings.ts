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
  const { baseUrl } = config.upstream;
  // An upstream on this machine reaches a callback on it; one elsewhere does not.
  const remote = baseUrl !== 'sandbox' && URL.canParse(baseUrl) && !isLocal(new URL(baseUrl).hostname.replace(/^\[|\]$/g, ''));
  if (!publicUrl && isLocal(host) && remote && config.webhooks.events.length > 0) {
    warnings.push(`server.publicUrl: not set, so the upstream is told to call http://${host.includes(':') ? `[${host}]` : host}:${port}/webhooks/v2, an address only this machine reaches; set the URL the upstream reaches this daemon at`);
  }
  return warnings;
}

/** An address only this machine reaches: a loopback one, or "every interface" (0.0.0.0, ::). */
function isLocal(host: string): boolean {
  return host === 'localhost' || host === '0.0.0.0' || host === '::' || host === '::1' || /^127\./.test(host);
}
