import { Agent } from 'undici';

/**
 * The production dispatcher for the upstream: one keep-alive Agent for the daemon's
 * life, so a poll every few minutes reuses its connection. The connect timeout belongs here, not
 * to single requests. Close it with `agent.close()` on shutdown.
 */
export function createUpstreamAgent(options: { connectTimeoutMs?: number; keepAliveTimeoutMs?: number } = {}): Agent {
  return new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 60_000,
    keepAliveMaxTimeout: 10 * 60_000,
    connections: 8,
  });
}
