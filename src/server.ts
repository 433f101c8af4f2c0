import type { FastifyInstance } from 'fastify';
import { BridgeError } from './errors.js';
import type { Component } from './lifecycle.js';

/**
 * The listening part of the daemon, apart from the app that builds the routes. Stop closes
 * the listener first (no new requests), then lets in-flight requests finish.
 */
export interface Server extends Component {
  /** The address it listens on, e.g. http://127.0.0.1:8080 (after start). */
  readonly url: string;
  /** Resolves with `url` once the server listens (parts that start before it wait on this). */
  listening(signal?: AbortSignal): Promise<string>;
}

export function createServer(http: FastifyInstance, options: { host: string; port: number }): Server {
  let url = '';
  let listening = false;
  let announce: (url: string) => void = () => {};
  const announced = new Promise<string>((resolve) => {
    announce = resolve;
  });
  return {
    name: 'server',
    get url() {
      return url;
    },
    async start() {
      if (listening) return;
      try {
        await http.listen({ host: options.host, port: options.port });
      } catch (error) {
        throw listenError(error, options);
      }
      listening = true;
      const address = http.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
      announce(url);
    },
    listening(signal) {
      if (!signal) return announced;
      return new Promise<string>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        void announced.then(resolve);
      });
    },
    async stop() {
      if (!listening) return;
      listening = false;
      await http.close();
    },
  };
}

/** The settings a listening socket's address comes from, named in what fixes it. */
export interface ListenSettings {
  /** The error codes' prefix: `server`, `sandbox`. */
  code: string;
  port: string;
  host: string;
}

const SERVER_SETTINGS: ListenSettings = { code: 'server', port: 'server.port (SCHOOLBRIDGE_PORT in the embedded default)', host: 'server.host' };

/** Why a socket cannot listen, naming the setting that fixes it (the embedded default reads SCHOOLBRIDGE_PORT). */
export function listenError(error: unknown, at: { host: string; port: number }, settings: ListenSettings = SERVER_SETTINGS): unknown {
  const code = (error as { code?: unknown }).code;
  const where = `${at.host}:${at.port}`;
  const fix = `choose another with ${settings.port}`;
  if (code === 'EADDRINUSE') return new BridgeError(`${settings.code}.port_in_use`, `cannot listen on ${where}: another process uses the port; stop it, or ${fix}`, { cause: error });
  if (code === 'EACCES') return new BridgeError(`${settings.code}.port_denied`, `cannot listen on ${where}: ports below 1024 need privileges this user lacks; ${fix}`, { cause: error });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new BridgeError(`${settings.code}.host`, `cannot listen on ${where}: no such address on this machine; fix ${settings.host} (127.0.0.1, or 0.0.0.0 for every interface)`, { cause: error });
  return error;
}
