import { afterEach } from 'vitest';
import type { Claimed, Enqueue, InboxEntry, Key, Settlement, Store } from '../port.js';
import type { StoreTimings } from '../timings.js';

/**
 * `open` makes a store on fresh, empty storage; `second` opens another replica on the same storage
 * where the engine allows several (PostgreSQL). `timings` goes to the store's options.
 */
export interface StoreFactory {
  open(options?: { timings?: StoreTimings }): Promise<Store>;
  second?(): Promise<Store>;
}

/** Later than any real clock reading: whatever the store enqueued at its own `now` is due by then. */
export const NOW = Date.parse('2100-01-01T00:00:00Z');

export function event(id: string, extra: Partial<InboxEntry> = {}): InboxEntry {
  return { id, event: 'invoice.created', receivedAt: new Date(NOW).toISOString(), receivedAtMs: NOW, body: `{"event":"invoice.created","object":{"id":"${id}"}}`, recordIds: [`events:${id}`], reprocessed: 0, ...extra };
}

export function record(id: string, orderKey: string, connectors: readonly string[] = ['a'], json = `{"id":"${id}"}`): Enqueue {
  return { id, stream: 'invoices', orderKey, json, connectors };
}

export const done = (id: string, fence: number, connector = 'a'): Settlement => ({ id, fence, connector, status: 'done', at: NOW });
export const retryLater = (id: string, fence: number, attempts: number, runAt = NOW + 60_000, connector = 'a'): Settlement =>
  ({ id, fence, connector, status: 'pending', at: NOW, runAt, attempts, lastError: 'x' });
export const dead = (id: string, fence: number, attempts: number, connector = 'a'): Settlement =>
  ({ id, fence, connector, status: 'dead', at: NOW, runAt: NOW, attempts, lastError: 'rejected' });
/** The settlement of a claimed delivery, as the outbox worker makes it (a range or log item keeps its place). */
export const outcome = (c: Claimed, settlement: (id: string, fence: number) => Settlement): Settlement => ({
  ...settlement(c.delivery.id, c.delivery.fence), connector: c.delivery.connector,
  ...(c.delivery.range ? { range: c.delivery.range } : {}), ...(c.delivery.log ? { log: c.delivery.log } : {}),
});

/** A claimed record's JSON as text: its own, or its snapshot row's (which an engine may give as bytes). */
export function textOf(claimed: Claimed): string | undefined {
  const text = claimed.created?.text ?? claimed.json;
  return text === undefined || typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
}

/** The UTF-8 bytes of fresh rows as the list worker makes them: chain, then JSON, per row. */
export function freshRows(rows: { key: Key; chain: string; json: string; hash?: string }[]) {
  const parts = rows.map((r) => Buffer.from(r.chain + r.json));
  const ends: number[] = [];
  let end = 0;
  for (const part of parts) ends.push((end += part.length));
  const bytes = Buffer.concat(parts);
  return { keys: rows.map((r) => r.key), hashes: rows.map((r) => r.hash ?? `h${r.key}`), bytes: new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), ends };
}


/** What every part of the suite uses: stores opened for a case (stopped after it) and a claim. */
export interface Harness {
  /** The engine opens several replicas on one storage (`open('second')`). */
  shared: boolean;
  open(which?: 'open' | 'second', options?: { timings?: StoreTimings }): Promise<Store>;
  claim(store: Store, connector?: string, limit?: number, now?: number): Promise<Claimed[]>;
}

/** Call inside a describe: the stores a case opens are stopped after it. */
export function harness(factory: StoreFactory): Harness {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0).reverse()) await store.stop();
  });
  return {
    shared: factory.second !== undefined,
    async open(which = 'open', options = {}) {
      const store = which === 'open' ? await factory.open(options) : await factory.second!();
      await store.start();
      opened.push(store);
      return store;
    },
    claim: (store, connector = 'a', limit = 10, now = NOW) => store.outbox.claim({ connector, limit, now, leaseMs: 60_000 }),
  };
}
