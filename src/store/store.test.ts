import { link, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { tempDir } from '../../test/support/temp.js';
import { createStore, type Store } from './store.js';
import { type Op } from './wal.js';

const log = silentLogger();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(dir: string, options: { checkpointBytes?: number } = {}): Promise<Store> {
  const store = createStore({ dir, log, ...options });
  await store.start();
  cleanups.push(() => store.stop());
  return store;
}

async function newDir(): Promise<string> {
  const temp = await tempDir();
  cleanups.push(temp.cleanup);
  return temp.dir;
}

/** Bytes of WAL lines in a segment: they end where its preallocated zeros begin. */
async function dataBytes(file: string): Promise<number> {
  const raw = await readFile(file);
  const end = raw.indexOf(0);
  return end < 0 ? raw.length : end;
}

/** The lines of a WAL segment, without its preallocated zeros. */
async function walText(file: string): Promise<string> {
  return (await readFile(file)).subarray(0, await dataBytes(file)).toString('utf8');
}

/** Writes `text` right after a segment's last line, as a crash mid-write would leave it. */
async function writeAtDataEnd(file: string, text: string): Promise<void> {
  const handle = await open(file, 'r+');
  await handle.write(text, await dataBytes(file));
  await handle.close();
}

describe('store', () => {
  it('keeps what was committed across a reopen', async () => {
    const dir = await newDir();
    const first = await openStore(dir);
    await first.commit([
      { op: 'put', c: 'outbox', k: 'a', v: { n: 1 } },
      { op: 'put', c: 'outbox', k: 'b', v: { n: 2 } },
    ]);
    await first.commit([{ op: 'del', c: 'outbox', k: 'a' }, { op: 'put', c: 'inbox', k: 'x', v: 'ż' }]);
    await first.stop();
    const second = await openStore(dir);
    expect([...second.entries('outbox')]).toEqual([['b', { n: 2 }]]);
    expect(second.get('inbox', 'x')).toBe('ż');
  });

  it('applies a commit in memory at once and resolves once durable', async () => {
    const store = await openStore(await newDir());
    const pending = store.commit([{ op: 'put', c: 'c', k: 'k', v: 1 }]);
    expect(store.has('c', 'k')).toBe(true);
    await pending;
    await store.durable();
  });

  it('staged ops are seen at once, written by no commit, and reach a checkpoint', async () => {
    const dir = await newDir();
    const first = await openStore(dir);
    await first.commit([{ op: 'put', c: 'outbox', k: 'a', v: { status: 'pending' } }]);
    first.stage([{ op: 'put', c: 'outbox', k: 'a', v: { status: 'active' } }]);
    expect(first.get('outbox', 'a')).toEqual({ status: 'active' });
    await first.durable();
    await first.stop(); // no checkpoint at stop: as after a crash, only the WAL speaks
    const second = await openStore(dir);
    expect(second.get('outbox', 'a')).toEqual({ status: 'pending' });
    second.stage([{ op: 'put', c: 'outbox', k: 'a', v: { status: 'active' } }]);
    await second.commit([{ op: 'put', c: 'outbox', k: 'b', v: 1 }]);
    await second.checkpoint();
    await second.stop();
    const third = await openStore(dir);
    expect(third.get('outbox', 'a')).toEqual({ status: 'active' });
    expect(third.get('outbox', 'b')).toBe(1);
  });

  it('keeps big commits (written off the event loop) and small ones (written on it) alike', async () => {
    const dir = await newDir();
    const first = await openStore(dir);
    const big = 'ż'.repeat(400_000); // 800 KB of UTF-8, past the synchronous-write limit
    await Promise.all([first.commit([{ op: 'put', c: 'c', k: 'big', v: big }]), first.commit([{ op: 'put', c: 'c', k: 'small', v: 1 }])]);
    await first.stop();
    const second = await openStore(dir);
    expect(second.get('c', 'big')).toBe(big);
    expect(second.get('c', 'small')).toBe(1);
  });

  it('tells the time of each fsync, and reports the slowest', async () => {
    const syncs: number[] = [];
    const store = createStore({ dir: await newDir(), log, onFsync: (ms) => syncs.push(ms) });
    await store.start();
    cleanups.push(() => store.stop());
    await store.commit([{ op: 'put', c: 'c', k: 'a', v: 1 }]);
    await store.commit([{ op: 'put', c: 'c', k: 'b', v: 2 }]);
    expect(syncs).toHaveLength(2);
    expect(syncs.every((ms) => ms >= 0)).toBe(true);
    expect(store.stats().slowestFsyncMs).toBe(Math.round(Math.max(...syncs)));
  });

  it('groups concurrent commits and keeps their order', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.commit([{ op: 'put', c: 'c', k: 'k', v: i }])));
    await store.stop();
    const reopened = await openStore(dir);
    expect(reopened.get('c', 'k')).toBe(199);
    expect(reopened.stats().seq).toBe(200);
  });

  it('checkpoints into lowdb documents and replays only newer WAL entries', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'snap', k: '1', v: 'old' }]);
    await store.checkpoint();
    await store.commit([{ op: 'put', c: 'snap', k: '1', v: 'new' }, { op: 'put', c: 'snap', k: '2', v: 'two' }]);
    await store.stop();
    const files = await readdir(dir);
    expect(files).toContain('snap.db.json');
    const reopened = await openStore(dir);
    expect(Object.fromEntries(reopened.entries('snap'))).toEqual({ 1: 'new', 2: 'two' });
  });

  it('checkpoint() asked while one runs starts another once that one is done (it may predate the caller\'s commits)', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'c', k: 'before', v: 'x'.repeat(1000) }]);
    const running = store.checkpoint();
    await store.commit([{ op: 'put', c: 'c', k: 'after', v: 1 }]);
    await store.checkpoint();
    await running;
    expect(store.stats().checkpoints).toBe(2);
    await store.stop();
    const reopened = await openStore(dir);
    expect(reopened.get('c', 'after')).toBe(1);
  });

  it('removes what a crash mid-checkpoint left (a temp document, an old name) when it opens, and keeps the documents', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'snap', k: '1', v: 'one' }]);
    await store.checkpoint();
    await store.stop();
    await writeFile(path.join(dir, 'snap.db.json.4242.tmp'), '{"seq":9,"entries":{"1":"half');
    await link(path.join(dir, 'snap.db.json'), path.join(dir, 'snap.db.json.old')); // between the link and the rename
    const reopened = await openStore(dir);
    expect((await readdir(dir)).filter((f) => f.startsWith('snap.'))).toEqual(['snap.db.json']);
    expect(Object.fromEntries(reopened.entries('snap'))).toEqual({ 1: 'one' });
  });

  it('writes the WAL over zeros filled ahead of it, and reads back only its lines', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'c', k: 'small', v: 1 }]);
    // Past the headroom left to the writes: this one waits for the zero fill and goes after it.
    await store.commit([{ op: 'put', c: 'c', k: 'big', v: 'x'.repeat(3 * 1024 * 1024) }]);
    await store.commit([{ op: 'put', c: 'c', k: 'after', v: 2 }]);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    const file = path.join(dir, segment!);
    expect((await stat(file)).size).toBeGreaterThan(16 * 1024 * 1024);
    expect((await walText(file)).split('\n').filter(Boolean).map((line) => JSON.parse(line).o[0].k)).toEqual(['small', 'big', 'after']);
    const reopened = await openStore(dir);
    expect([reopened.get('c', 'small'), (reopened.get('c', 'big') as string).length, reopened.get('c', 'after')]).toEqual([1, 3 * 1024 * 1024, 2]);
    expect(reopened.stats().walBytes).toBe(await dataBytes(file));
  });

  it('keeps values written raw (Op.raw) across a restart, and drops a raw line torn in its values', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    const value = '------------{"name":"Żaneta \\"Ż\\"","note":"a\\tb"}\t';
    const raw = Buffer.from(value);
    await store.commit([{ op: 'put', c: 'c', k: 'raw', v: value, raw }, { op: 'put', c: 'c', k: 'plain', v: 1 }]);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    // A crash in the middle of the raw values of the next line.
    await writeAtDataEnd(path.join(dir, segment!), `{"s":2,"o":[{"op":"put","c":"c","k":"lost","r":40}]}\t------------{"half`);
    const reopened = await openStore(dir);
    expect(Object.fromEntries(reopened.entries('c'))).toEqual({ raw: value, plain: 1 });
    await reopened.stop();
  });

  it('a crash at any byte of the log leaves exactly the commits whose lines were whole, raw values or not', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    const raw = (k: string, v: string): Op => ({ op: 'put', c: 'c', k, v, raw: Buffer.from(v) });
    await store.commit([raw('a', '------------{"x":"ż\t\\"}'), { op: 'put', c: 'c', k: 'b', v: { y: 1 } }]);
    await store.commit([{ op: 'put', c: 'c', k: 'c', v: 'plain "text"' }]);
    // And a value as raw JSON in parts (Op.rawJson), between raw values.
    const rawJson: Op = { op: 'put', c: 'c', k: 'f', v: { z: 'ż"' }, rawJson: [Buffer.from('{"z":'), Buffer.from('"\\u017c\\""}')] };
    await store.commit([raw('d', 'dd'), rawJson, raw('e', '😀'), { op: 'del', c: 'c', k: 'b' }]);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    const bytes = (await readFile(path.join(dir, segment!))).subarray(0, await dataBytes(path.join(dir, segment!)));
    const ends = [...bytes.entries()].filter(([, b]) => b === 0x0a).map(([i]) => i + 1);
    const states = [{}, { a: '------------{"x":"ż\t\\"}', b: { y: 1 } }, { a: '------------{"x":"ż\t\\"}', b: { y: 1 }, c: 'plain "text"' }];
    states.push({ a: states[1]!.a, c: 'plain "text"', d: 'dd', f: { z: 'ż"' }, e: '😀' } as never);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const copy = await newDir();
      await writeFile(path.join(copy, segment!), bytes.subarray(0, cut));
      const reopened = createStore({ dir: copy, log });
      await reopened.start();
      // A line whole but for its newline counts: it was written entirely (and never acknowledged).
      const whole = ends.filter((end) => end <= cut + 1).length;
      expect([cut, Object.fromEntries(reopened.entries('c'))]).toEqual([cut, states[whole]]);
      await reopened.stop();
    }
  });

  it('drops a torn last WAL line (a crash mid-append) and goes on', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'c', k: 'kept', v: 1 }]);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    await writeAtDataEnd(path.join(dir, segment!), '{"s":2,"o":[{"op":"put","c":"c","k":"lost"');
    const reopened = await openStore(dir);
    expect(reopened.has('c', 'kept')).toBe(true);
    expect(reopened.has('c', 'lost')).toBe(false);
    await reopened.commit([{ op: 'put', c: 'c', k: 'after', v: 3 }]);
    await reopened.stop();
    const third = await openStore(dir);
    expect([...third.entries('c')].map(([k]) => k).sort()).toEqual(['after', 'kept']);
  });

  it('a crash while an old segment is cut down after a checkpoint: what is left of it changes nothing', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit([{ op: 'put', c: 'c', k: 'k1', v: 'a' }]);
    await store.commit([{ op: 'put', c: 'c', k: 'k2', v: 'b' }]);
    await store.commit([{ op: 'put', c: 'c', k: 'k1', v: 'a2' }]);
    const [old] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    const lines = await walText(path.join(dir, old!));
    await store.checkpoint();
    expect(await readdir(dir)).not.toContain(old);
    await store.commit([{ op: 'put', c: 'c', k: 'k2', v: 'b2' }]);
    await store.stop();
    // The old segment as removeGradually would leave it, cut in the middle of its last line.
    await writeFile(path.join(dir, old!), lines.slice(0, lines.lastIndexOf('\n', lines.length - 2) + 12));
    const reopened = await openStore(dir);
    expect(Object.fromEntries(reopened.entries('c'))).toEqual({ k1: 'a2', k2: 'b2' });
    await reopened.checkpoint();
    expect(await readdir(dir)).not.toContain(old);
  });

  it('refuses to open a WAL corrupted in the middle, with a clear error', async () => {
    const dir = await newDir();
    await writeFile(path.join(dir, 'wal-000000000001.log'), 'garbage\n{"s":2,"o":[]}\n');
    const store = createStore({ dir, log });
    await expect(store.start()).rejects.toMatchObject({ code: 'store.corrupt' });
  });

  it('lets one process hold a store; a second is told who holds it', async () => {
    const dir = await newDir();
    await openStore(dir);
    await writeFile(path.join(dir, 'LOCK'), JSON.stringify({ pid: process.ppid, host: (await import('node:os')).hostname(), startedAt: 'then' }));
    const second = createStore({ dir, log });
    await expect(second.start()).rejects.toMatchObject({ code: 'store.locked' });
    await expect(second.start()).rejects.toThrow(String(process.ppid));
  });

  it('takes over the lock of a process that no longer runs', async () => {
    const dir = await newDir();
    await writeFile(path.join(dir, 'LOCK'), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import('node:os')).hostname(), startedAt: 'x' }));
    const store = await openStore(dir);
    expect(store.health()).toEqual({ ok: true });
  });

  it('works in memory without a directory', async () => {
    const store = createStore({ log });
    await store.start();
    await store.commit([{ op: 'put', c: 'c', k: 'k', v: 1 }]);
    expect(store.get('c', 'k')).toBe(1);
    await store.stop();
    await store.stop();
  });

  it('rejects commits when closed', async () => {
    const store = createStore({ log });
    await expect(store.commit([{ op: 'put', c: 'c', k: 'k', v: 1 }])).rejects.toMatchObject({ code: 'store.closed' });
  });

  it('checkpoints by itself once the WAL passes its size limit, and stays readable', async () => {
    const dir = await newDir();
    const store = await openStore(dir, { checkpointBytes: 2_000 });
    for (let i = 0; i < 50; i++) await store.commit([{ op: 'put', c: 'big', k: String(i), v: 'x'.repeat(100) }]);
    await store.checkpoint();
    await store.stop();
    const reopened = await openStore(dir);
    expect(reopened.size('big')).toBe(50);
    expect(reopened.stats().walBytes).toBeLessThan(2_000);
  });

  it('writes a put\'s ready-made json verbatim and reads the same value back', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    const value = { a: 'ż"\\', n: [1, null] };
    await store.commit([{ op: 'put', c: 'c', k: 'raw', v: value, json: JSON.stringify(value) }, { op: 'put', c: 'c', k: 'plain', v: 2 }, { op: 'del', c: 'c', k: 'none' }]);
    expect(store.get('c', 'raw')).toBe(value);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    expect(JSON.parse(await walText(path.join(dir, segment!)))).toEqual({
      s: 1, o: [{ op: 'put', c: 'c', k: 'raw', v: value }, { op: 'put', c: 'c', k: 'plain', v: 2 }, { op: 'del', c: 'c', k: 'none' }],
    });
    const reopened = await openStore(dir);
    expect(reopened.get('c', 'raw')).toEqual(value);
  });

  it('writes a put\'s ready-made JSON text verbatim, beside plain ops, and reads the same value back', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    const ops = [
      { op: 'put' as const, c: 'c', k: 'first', v: 1 },
      { op: 'put' as const, c: 'c', k: 'json', v: { a: 'ż' }, json: '{"a":"\\u017c"}' },
      { op: 'del' as const, c: 'c', k: 'none' },
    ];
    await store.commit(ops);
    await store.stop();
    const [segment] = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    expect(await walText(path.join(dir, segment!))).toBe('{"s":1,"o":[{"op":"put","c":"c","k":"first","v":1},{"op":"put","c":"c","k":"json","v":{"a":"\\u017c"}},{"op":"del","c":"c","k":"none"}]}\n');
    const reopened = await openStore(dir);
    expect(reopened.get('c', 'json')).toEqual({ a: 'ż' });
  });

  it('a checkpoint written while commits go on, then a crash: the reopened store holds the latest state', async () => {
    const dir = await newDir();
    const first = await openStore(dir);
    await first.commit(Array.from({ length: 20_000 }, (_, i) => ({ op: 'put' as const, c: 'c', k: `k${i}`, v: { n: i, pad: 'x'.repeat(200) } })));
    let written = false;
    const checkpoint = first.checkpoint().then(() => {
      written = true;
    });
    let roundsWhileWriting = 0;
    // While it writes: updates, deletions, deletions added back, new keys.
    for (let round = 0; round < 20; round++) {
      if (!written) roundsWhileWriting++;
      const i = round * 997;
      await first.commit([
        { op: 'put', c: 'c', k: `k${i}`, v: { n: `updated ${i}` } },
        { op: 'del', c: 'c', k: `k${i + 1}` },
        { op: 'del', c: 'c', k: `k${i + 2}` },
        { op: 'put', c: 'c', k: `k${i + 2}`, v: 'back' },
        { op: 'put', c: 'c', k: `new${round}`, v: round },
      ]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await checkpoint;
    expect(roundsWhileWriting).toBeGreaterThan(5);
    const expected = [...first.entries('c')].sort(([a], [b]) => a.localeCompare(b));
    await first.stop(); // no checkpoint at stop: the document plus the WAL must give this state
    const second = await openStore(dir);
    expect([...second.entries('c')].sort(([a], [b]) => a.localeCompare(b))).toEqual(expected);
    expect(second.size('c')).toBe(20_000 - 20 + 20);
  });

  it('counts the WAL bytes committed while a checkpoint runs (they stay in the new segment)', async () => {
    const dir = await newDir();
    const store = await openStore(dir);
    await store.commit(Array.from({ length: 5000 }, (_, i) => ({ op: 'put' as const, c: 'c', k: `k${i}`, v: 'x'.repeat(100) })));
    const checkpoint = store.checkpoint();
    await store.commit([{ op: 'put', c: 'c', k: 'during', v: 'y'.repeat(1000) }]);
    await checkpoint;
    const segments = (await readdir(dir)).filter((f) => f.startsWith('wal-'));
    const onDisk = (await Promise.all(segments.map((f) => dataBytes(path.join(dir, f))))).reduce((sum, n) => sum + n, 0);
    expect(onDisk).toBeGreaterThan(1000);
    expect(store.stats().walBytes).toBe(onDisk);
  });

  it('checkpoints in proportion to the data: a WAL smaller than twice the documents waits', async () => {
    const dir = await newDir();
    const store = await openStore(dir, { checkpointBytes: 1_000 });
    await store.commit([{ op: 'put', c: 'big', k: 'doc', v: 'x'.repeat(10_000) }]);
    await store.checkpoint(); // a ~10 kB document
    for (let i = 0; i < 10; i++) await store.commit([{ op: 'put', c: 'small', k: String(i), v: 'y'.repeat(500) }]);
    expect(store.stats().walBytes).toBeGreaterThan(1_000); // past checkpointBytes, but under 2 × 10 kB: no checkpoint
    await store.stop();
    expect((await readdir(dir)).filter((f) => f.endsWith('.db.json'))).toEqual(['big.db.json']);
    const reopened = await openStore(dir, { checkpointBytes: 1_000 });
    expect(reopened.size('small')).toBe(10);
  });

  it('holds back the checkpoints it would start itself while a bulk writer asks, and starts one when released', async () => {
    const dir = await newDir();
    const store = await openStore(dir, { checkpointBytes: 1_000 });
    const release = store.holdCheckpoints();
    for (let i = 0; i < 5; i++) await store.commit([{ op: 'put', c: 'bulk', k: String(i), v: 'x'.repeat(1_000) }]);
    expect(store.stats().walBytes).toBeGreaterThan(5_000);
    expect(store.stats().checkpoints).toBe(0);
    release();
    release(); // twice is harmless
    expect(store.stats().checkpoints).toBe(1);
    await store.checkpoint();
    expect((await readdir(dir)).filter((f) => f.endsWith('.db.json'))).toEqual(['bulk.db.json']);
  });
});
