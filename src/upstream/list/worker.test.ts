import type { Key } from '../../streams/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ParseBatch } from './parse.js';
import { createListWorker, type ListWorker, type ParseSink } from './worker.js';
import { jsonBody, testUser } from '../../../test/support/poll.js';

let worker: ListWorker;
afterEach(async () => {
  await worker.stop();
});

/** A sink that records what the worker hands over. */
function collect() {
  const out = { known: 0, keys: [] as Key[] };
  const sink: ParseSink = {
    batch(batch: ParseBatch) {
      out.known += batch.known;
      out.keys.push(...batch.keys);
    },
  };
  return { out, sink };
}

const users = (n: number, from = 1) => Array.from({ length: n }, (_, i) => testUser(from + i));

describe('list worker', () => {
  it('parses a list off the main thread, then skips the bytes of an adopted read, until dropped', async () => {
    worker = createListWorker();
    const first = collect();
    const read = await worker.parse('users', jsonBody({ data: { users: users(300) } }, 4096), { useIndex: true }, first.sink);
    expect(read.end).toEqual({ count: 300, deleted: [] });
    expect(first.out.keys).toHaveLength(300);

    // Not adopted yet: nothing is known.
    const again = collect();
    await worker.parse('users', jsonBody({ data: { users: users(3) } }), { useIndex: true }, again.sink);
    expect(again.out.known).toBe(0);

    const indexed = await worker.parse('users', jsonBody({ data: { users: users(300) } }), { useIndex: true }, collect().sink);
    worker.adopt('users', indexed.id, 7);
    expect(worker.indexVersion('users')).toBe(7);
    const changed = users(299);
    changed[9] = testUser(10, 'Zmiana');
    const next = collect();
    const read2 = await worker.parse('users', jsonBody({ data: { users: changed } }), { useIndex: true }, next.sink);
    expect(next.out.keys).toEqual([10]);
    expect(next.out.known).toBe(298);
    expect(read2.end.deleted).toEqual([300]);

    // useIndex false parses everything; a drop forgets the index.
    const full = collect();
    await worker.parse('users', jsonBody({ data: { users: changed } }), { useIndex: false }, full.sink);
    expect(full.out.keys).toHaveLength(299);
    worker.drop('users');
    expect(worker.indexVersion('users')).toBeUndefined();
    const none = collect();
    await worker.parse('users', jsonBody({ data: { users: changed } }), { useIndex: true }, none.sink);
    expect(none.out.known).toBe(0);
  });

  it('takes an index read from the store, and knows its version', async () => {
    worker = createListWorker();
    const probe = await worker.parse('users', jsonBody({ data: { users: users(3) } }), { useIndex: false }, collect().sink);
    worker.adopt('users', probe.id, 1);
    // An index as the store gives it: keys and the raw hashes of their bytes (here: of a read elsewhere).
    const other = createListWorker();
    try {
      const hashes: string[] = [];
      await other.parse('users', jsonBody({ data: { users: users(3) } }), { useIndex: false }, { batch: (b) => void hashes.push(...b.hashes) });
      worker.setIndex('users', { version: 5, keys: Float64Array.of(1, 2, 3, 4), hashes: `${hashes.join('\n')}\n\n` });
    } finally {
      await other.stop();
    }
    expect(worker.indexVersion('users')).toBe(5);
    const got = collect();
    const read = await worker.parse('users', jsonBody({ data: { users: users(3) } }), { useIndex: true }, got.sink);
    expect(got.out.known).toBe(3);
    expect(read.end.deleted).toEqual([4]);
  });

  it('waits for a sink that takes its time before it reads on, and keeps the order of batches', async () => {
    worker = createListWorker();
    const seen: Key[] = [];
    let inSink = 0;
    let most = 0;
    const sink: ParseSink = {
      async batch(batch) {
        inSink += 1;
        most = Math.max(most, inSink);
        await new Promise((resolve) => setTimeout(resolve, 2));
        seen.push(...batch.keys);
        inSink -= 1;
      },
    };
    const read = await worker.parse('users', jsonBody({ data: { users: users(3000) } }, 16 * 1024), { useIndex: false }, sink);
    expect(read.end.count).toBe(3000);
    expect(seen).toEqual(users(3000).map((u) => u.id));
    expect(most).toBe(1);
  });

  it('rejects with the error of a sink that fails', async () => {
    worker = createListWorker();
    const failing: ParseSink = { batch: () => Promise.reject(new Error('store refused')) };
    await expect(worker.parse('users', jsonBody({ data: { users: users(5) } }), { useIndex: false }, failing)).rejects.toThrow('store refused');
  });

  it('reads with threads started ahead by warm(), called any number of times', async () => {
    worker = createListWorker();
    worker.warm(['students', 'users']);
    worker.warm(['students', 'users']);
    const got = collect();
    const read = await worker.parse('users', jsonBody({ data: { users: users(5) } }), { useIndex: true }, got.sink);
    expect(read.end.count).toBe(5);
    expect(got.out.keys).toEqual([1, 2, 3, 4, 5]);
  });

  it('rejects with the upstream error of a malformed element, naming it, and keeps working', async () => {
    worker = createListWorker();
    const bad = worker.parse('users', jsonBody({ data: { users: [testUser(1), { ...testUser(2), id: 'x' }] } }), { useIndex: true }, collect().sink);
    await expect(bad).rejects.toMatchObject({ code: 'upstream.invalid_response', message: expect.stringContaining('data.users[1].id') });
    const good = await worker.parse('users', jsonBody({ data: { users: users(2) } }), { useIndex: true }, collect().sink);
    expect(good.end.count).toBe(2);
  });

  it('stop() ends a read that is still waiting for its body', async () => {
    worker = createListWorker();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* slowBody() {
      await held;
      yield Buffer.from('{"data":{"users":[]}}');
    }
    const reading = worker.parse('users', slowBody(), { useIndex: true }, collect().sink).then(
      () => 'resolved',
      (error: { code: string }) => error.code,
    );
    await worker.stop();
    release();
    expect(await reading).toBe('poll.stopped');
  });

  it('hands batches that piled up over to the sink a few at a time, with event-loop turns between them', async () => {
    worker = createListWorker();
    // An event-loop turn counter, and a sink that takes 3 ms per batch; the first one takes 200 ms,
    // while the worker finishes the batches already sent to it (up to 8 per stream).
    let turn = 0;
    let ticking = true;
    const tick = () => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const turns: number[] = [];
    const busy = (ms: number) => {
      for (const until = performance.now() + ms; performance.now() < until; );
    };
    const sink: ParseSink = {
      batch: () => {
        turns.push(turn);
        busy(turns.length === 1 ? 200 : 3);
      },
    };
    try {
      await worker.parse('users', jsonBody({ data: { users: users(40_000) } }, 64 * 1024), { useIndex: false }, sink);
    } finally {
      ticking = false;
    }
    expect(turns.length).toBeGreaterThan(8);
    // With a 4 ms budget and 3 ms per batch, at most two batches share a turn.
    const perTurn = new Map<number, number>();
    for (const t of turns) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);
  });
});
