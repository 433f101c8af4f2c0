import { describe, expect, it } from 'vitest';
import { compareKeys, polledStream, type Key } from '../../streams/index.js';
import type { SnapshotStream, StagedRow } from '../port.js';
import { CHAIN_LENGTH, SNAPSHOT_STREAMS } from '../tables.js';
import { NOW, done, freshRows, outcome, textOf, type Harness } from './support.js';

/**
 * Every stream of the registry (src/streams/) has its snapshot on every engine, whatever its key's
 * type: the same cases for each, with keys whose text order is not their order as numbers (integer
 * keys) or that look like numbers (string keys), so that no engine may order or keep one type as the
 * other.
 */
const KEYS: Readonly<Record<'integer' | 'string', readonly Key[]>> = {
  integer: [100, 2, 33, 9, 10],
  string: ['9', '0123', 'b', '10', 'a-1'],
};

const keysOf = (stream: SnapshotStream): Key[] => [...KEYS[polledStream(stream).key.type]];
const sorted = (keys: readonly Key[]) => [...keys].sort(compareKeys);
const chainOf = (key: Key) => `c${String(key).replace(/\W/g, '_').padStart(CHAIN_LENGTH - 1, '0')}`;
const jsonOf = (key: Key, name = 'Grupa') => JSON.stringify({ id: key, name });

/** The cases of each of `streams` (default: every stream of the registry). */
export function streamCases({ open, claim }: Harness, streams: readonly SnapshotStream[] = SNAPSHOT_STREAMS): void {
  describe.each(streams)('the %s stream', (stream) => {
    const keys = keysOf(stream);
    const order = sorted(keys);
    const rows = keys.map((key) => ({ key, chain: chainOf(key), json: jsonOf(key) }));

    it('keeps a fresh snapshot, reads it in key order, and finds rows by their key', async () => {
      const store = await open();
      await store.snapshot.begin(stream, 'fresh');
      await store.snapshot.stageFresh(stream, freshRows(rows));
      await store.snapshot.applyFresh(stream, { state: {} });
      expect(await store.snapshot.size(stream)).toBe(keys.length);
      expect((await store.snapshot.scan(stream, undefined, 10)).map((r) => r.key)).toEqual(order);
      expect((await store.snapshot.scan(stream, order[1], 2)).map((r) => r.key)).toEqual(order.slice(2, 4));
      const index = await store.snapshot.index(stream);
      expect([...index.keys]).toEqual(order);
      expect(index.hashes).toBe(order.map((key) => `h${key}\n`).join(''));
      expect(await store.snapshot.rows(stream, [keys[0]!])).toEqual([{ key: keys[0], chain: chainOf(keys[0]!), body: jsonOf(keys[0]!), rawHash: `h${keys[0]}` }]);
    });

    it('delivers a first cycle\'s created changes in key order, with keys of the stream\'s type', async () => {
      const store = await open();
      await store.snapshot.begin(stream, 'fresh');
      await store.snapshot.stageFresh(stream, freshRows(rows));
      await store.snapshot.applyFresh(stream, { state: {}, created: { detectedAt: 'T0', connectors: ['a'], now: NOW } });
      // One first: the range's cursor then stands on the smallest key ("0123" is not 123).
      const first = await claim(store, 'a', 1);
      await store.outbox.settle(first.map((c) => outcome(c, done)));
      const rest = await claim(store, 'a', 10);
      await store.outbox.settle(rest.map((c) => outcome(c, done)));
      const claimed = [...first, ...rest];
      expect(claimed.map((c) => c.created?.key)).toEqual(order);
      expect(claimed.map((c) => c.delivery.recordId)).toEqual(order.map((key) => `${stream}:${key}:${chainOf(key)}`));
      expect(textOf(claimed[0]!)).toBe(jsonOf(order[0]!));
      expect(await store.snapshot.createdPending(stream)).toBe(0);
    });

    it('keeps what a created change was made from when its row changes, and applies changes in key order', async () => {
      const store = await open();
      await store.snapshot.begin(stream, 'fresh');
      await store.snapshot.stageFresh(stream, freshRows(rows));
      await store.snapshot.applyFresh(stream, { state: {}, created: { detectedAt: 'T0', connectors: ['a'], now: NOW } });
      expect(await store.snapshot.materializeCreated(stream, 10, NOW)).toBe(0);
      const [changed, gone] = [order[3]!, order[1]!];
      const staged: StagedRow[] = [
        { key: changed, chain: 'u00000000001', body: jsonOf(changed, 'changed'), rawHash: 'x', change: { id: `${stream}:${changed}:u00000000001`, json: '{"op":"updated"}' } },
        { key: gone, chain: 'd00000000002', body: null, rawHash: null, change: { id: `${stream}:${gone}:d00000000002`, json: '{"op":"deleted"}' } },
      ];
      await store.snapshot.begin(stream, 'changes');
      await store.snapshot.stageChanges(stream, staged);
      expect(await store.snapshot.applyChanges(stream, { limit: 1, connectors: ['a'], state: {}, now: NOW })).toEqual({ applied: 1, done: false });
      expect(await store.snapshot.applyChanges(stream, { limit: 1, connectors: ['a'], state: {}, now: NOW })).toEqual({ applied: 1, done: true });
      expect((await store.snapshot.scan(stream, undefined, 10)).map((r) => r.key)).toEqual(order.filter((key) => key !== gone));
      const created = await claim(store, 'a', 10);
      expect(created.map((c) => [c.created?.key, textOf(c)])).toEqual(order.map((key) => [key, jsonOf(key)]));
      await store.outbox.settle(created.map((c) => outcome(c, done)));
      const after = await claim(store, 'a', 10);
      expect(after.map((c) => [c.delivery.orderKey, c.json])).toEqual([[`${stream}:${gone}`, '{"op":"deleted"}'], [`${stream}:${changed}`, '{"op":"updated"}']]);
    });
  });
}
