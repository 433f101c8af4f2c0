import { describe, expect, it } from 'vitest';
import { problems } from './problems.js';
import type { ConsoleSources } from './sources.js';

/** Sources with nothing failed for good, nothing retrying and one connector whose check passes. */
function sources(over: Partial<ConsoleSources> & { list?: () => Promise<never[]> } = {}): ConsoleSources {
  return {
    store: { outbox: { retrying: async () => [] }, people: { get: async () => [] } } as never,
    outbox: { list: over.list ?? (async () => []), connectors: async () => [{ name: 'files', check: { ok: true } }] } as never,
    quarantine: async () => [],
    clock: { now: () => 0 } as never,
    timezone: 'UTC',
    historyDays: 14,
    unready: () => [],
    ...over,
  };
}

describe('problems', () => {
  it('are none when nothing failed and every check passes', async () => {
    expect(await problems(sources(), { authed: true })).toMatchObject({ badge: 'green', reasons: [] });
  });

  it('name first what keeps the daemon from working: a store that cannot write, an upstream that is down', async () => {
    const unready = () => [{ name: 'store', reason: 'SQLITE_FULL: database or disk is full' }, { name: 'upstream', reason: 'last upstream call failed: upstream.network: …' }];
    expect(await problems(sources({ unready }), { authed: false })).toMatchObject({
      badge: 'red',
      reasons: ['store: SQLITE_FULL: database or disk is full', 'upstream: last upstream call failed: upstream.network: …'],
    });
  });

  it('say what could not be read rather than fail, and are not "all good" then', async () => {
    const list = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(await problems(sources({ list }), { authed: true })).toMatchObject({
      badge: 'red',
      reasons: ['the dead deliveries could not be read: connect ECONNREFUSED 127.0.0.1:5432'],
      dead: [],
    });
  });

  it('say once what could not be read for one reason', async () => {
    const down = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    const all = sources({ list: down, quarantine: down, store: { outbox: { retrying: down }, people: { get: async () => [] } } as never });
    expect((await problems(all, { authed: true })).reasons).toEqual([
      'the dead deliveries, the retrying deliveries and the held deliveries could not be read: connect ECONNREFUSED 127.0.0.1:5432',
    ]);
  });

  it('name each record of a group once: an event\'s two records are one name', async () => {
    const dead = (recordId: string) => ({ id: `hook:${recordId}`, connector: 'hook', recordId, lastError: 'webhook.rejected: the receiver answered 422: no' });
    const list = async () => [dead('events:invoice.created:301:aaaaaaaaaaaa'), dead('invoices:invoice.created:301:aaaaaaaaaaaa'), dead('invoices:invoice.created:601:bbbbbbbbbbbb')] as never[];
    const [group] = (await problems(sources({ list }), { authed: false })).dead;
    expect(group).toMatchObject({ count: 3 });
    expect(group!.names).toHaveLength(new Set(group!.names).size);
    expect(group!.names).toHaveLength(2);
  });
});
