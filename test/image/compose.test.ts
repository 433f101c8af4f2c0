import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { expandValue } from '../../src/config/expand.js';
import { readImageSpec } from './dockerfile.js';

/**
 * The compose files, read as Docker Compose reads them (no engine runs here): the daemon with its
 * volume, and the replicas file — PostgreSQL, two replicas with the same config and secrets, a proxy
 * in front that the upstream calls — each replica's config valid with what compose gives it.
 */
interface Service {
  build?: string;
  image?: string;
  command?: string[];
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown> | string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const image = readImageSpec();
const read = (file: string) => parse(readFileSync(file, 'utf8'), { merge: true }) as ComposeFile;
/** `${NAME:-default}` as compose expands it, with nothing set in the shell: the defaults. */
const defaults = (environment: Record<string, string> = {}) => expandValue(environment, {}, []) as Record<string, string>;
const mount = (service: Service, target: string) => service.volumes?.find((v) => v.split(':')[1] === target)?.split(':')[0];

describe('compose.yaml', () => {
  const { services, volumes } = read('compose.yaml');

  it('runs the daemon from the image with its state on a named volume at the image\'s VOLUME', () => {
    const daemon = services.schoolbridge!;
    expect(daemon.build).toBe('.');
    expect(daemon.ports).toEqual([`${image.exposed[0]}:${image.exposed[0]}`]);
    expect(image.volumes).toEqual(['/data']);
    expect(Object.keys(volumes ?? {})).toContain(mount(daemon, '/data'));
    // No config mounted: the embedded default, which the image points at /data.
    expect(mount(daemon, '/app/config/schoolbridge.yaml')).toBeUndefined();
  });
});

describe('compose.replicas.yaml', () => {
  const { services, volumes } = read('compose.replicas.yaml');
  const replicas = Object.entries(services).filter(([name]) => name.startsWith('replica-'));

  it('has two replicas with the same config and secrets, on one PostgreSQL', () => {
    expect(replicas.map(([name]) => name)).toEqual(['replica-1', 'replica-2']);
    expect(replicas[0]![1]).toEqual(replicas[1]![1]);
    const replica = replicas[0]![1];
    const config = mount(replica, '/app/config/schoolbridge.yaml')!;
    expect(existsSync(config)).toBe(true);
    expect(Object.keys(volumes ?? {})).toContain(mount(replica, '/data'));
    expect(replica.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' } });
  });

  it("gives each replica a valid config: postgres at the compose database, publicUrl the proxy's address", () => {
    const replica = replicas[0]![1];
    const env = defaults(replica.environment);
    const config = parseConfig(readFileSync(mount(replica, '/app/config/schoolbridge.yaml')!, 'utf8'), 'replicas.yaml', { ...env, ...image.env });
    expect(config.store.driver).toBe('postgres');
    const database = new URL(config.store.url!);
    const postgres = defaults(services.postgres!.environment);
    expect(database.hostname).toBe('postgres');
    expect([database.username, decodeURIComponent(database.password), database.pathname.slice(1)]).toEqual([postgres.POSTGRES_USER, postgres.POSTGRES_PASSWORD, postgres.POSTGRES_DB]);
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: image.exposed[0], publicUrl: 'http://proxy:8080' });
    expect(config.connectors.every((c) => !('dir' in c) || c.dir.startsWith('/data/'))).toBe(true);
  });

  it('puts the proxy in front of both replicas, on the address the replicas advertise', () => {
    const proxy = services.proxy!;
    expect(proxy.ports).toEqual(['8080:8080']);
    expect(proxy.command!.join(' ')).toMatch(/--from :8080 --to replica-1:8080 --to replica-2:8080$/);
  });

  it('runs the simulated upstream from the same image, with the replicas\' credentials', () => {
    const sandbox = services.sandbox!;
    const replica = defaults(replicas[0]![1].environment);
    expect(sandbox.command!.slice(0, 1)).toEqual(['sandbox']);
    expect(replica.SCHOOLBRIDGE_UPSTREAM_URL).toBe(`http://sandbox:${sandbox.command![sandbox.command!.indexOf('--port') + 1]}`);
    expect(defaults(sandbox.environment)).toEqual({ SANDBOX_CLIENT_ID: replica.SCHOOLBRIDGE_CLIENT_ID, SANDBOX_CLIENT_SECRET: replica.SCHOOLBRIDGE_CLIENT_SECRET });
  });
});
