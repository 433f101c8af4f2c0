import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Every package the lock file installs runs on the Node.js versions we claim. npm only warns
 * (EBADENGINE) when one does not and installs it anyway; here that is a failing test. What the
 * daemon runs (the production dependencies) must admit the lowest version of `engines`; the
 * development tools (vitest, eslint) need a later Node.js 20, which the README names. Node.js 24 is
 * the image's and CI's second line.
 */
interface LockEntry {
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const lowest = semver.minVersion(pkg.engines.node)!.version;
const DEVELOPMENT_LOWEST = '20.19.0';
const NODE_24 = '24.0.0';

function refusing(version: string, include: (entry: LockEntry) => boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([name, entry]) => name !== '' && include(entry))
    .flatMap(([name, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return range && !semver.satisfies(version, range) ? [`${name.replace(/^.*node_modules\//, '')} (node ${range})`] : [];
    });
}

describe('engines', () => {
  it('claims the versions CI runs', () => {
    for (const version of [lowest, DEVELOPMENT_LOWEST, NODE_24]) expect(semver.satisfies(version, pkg.engines.node), version).toBe(true);
  });

  it(`every production dependency admits the lowest claimed Node.js (${lowest})`, () => {
    expect(refusing(lowest, (entry) => entry.dev !== true)).toEqual([]);
  });

  it.each([DEVELOPMENT_LOWEST, NODE_24])('every locked package admits Node.js %s', (version) => {
    expect(refusing(version, () => true)).toEqual([]);
  });
});
