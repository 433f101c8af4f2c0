/** Shards, and each one's share of the keys: shard j (0-based) takes (j + 1) / SHARES of them. */
const SHARDS = 64;
const SHARES = (SHARDS * (SHARDS + 1)) / 2;
/** Hash value (mod SHARES) → shard, each shard owning as many values as its share. */
const SHARD_OF = new Uint8Array(SHARES);
for (let shard = 0, at = 0; shard < SHARDS; shard++) for (let i = 0; i <= shard; i++) SHARD_OF[at++] = shard;

/**
 * A Map with string keys, kept as 64 maps that take unequal shares of the keys (1/2080 … 64/2080).
 *
 * Why: V8 grows a Map by rehashing all of it in one go. A first poll cycle commits one entry per
 * record into several maps at once (the outbox's queue index and the store's collections), so they
 * all pass 262,144 entries in the same chunk: one event-loop turn of 300-340 ms, of which the queue
 * index's maps took 143-152 ms and the store's 55-65 ms (bench:poll, `emit`, profiled; with both
 * sharded the longest turn of the commit was under 40 ms). Shards of equal size would
 * grow all at once too; with unequal shares each shard reaches its growth points at a different
 * count, so the growth is spread over the cycle, ~3% of the entries at a time at most.
 *
 * Iteration goes shard by shard: not in insertion order.
 */
export class ShardedMap<V> implements Iterable<[string, V]> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  private count = 0;

  static from<V>(entries: Iterable<[string, V]>): ShardedMap<V> {
    const map = new ShardedMap<V>();
    for (const [key, value] of entries) map.set(key, value);
    return map;
  }

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.shardOf(key).get(key);
  }

  has(key: string): boolean {
    return this.shardOf(key).has(key);
  }

  set(key: string, value: V): this {
    const shard = this.shardOf(key);
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  delete(key: string): boolean {
    const deleted = this.shardOf(key).delete(key);
    if (deleted) this.count -= 1;
    return deleted;
  }

  *entries(): IterableIterator<[string, V]> {
    for (const shard of this.shards) yield* shard.entries();
  }

  *keys(): IterableIterator<string> {
    for (const shard of this.shards) yield* shard.keys();
  }

  *values(): IterableIterator<V> {
    for (const shard of this.shards) yield* shard.values();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** Each shard's size (tests). */
  shardSizes(): number[] {
    return this.shards.map((shard) => shard.size);
  }

  private shardOf(key: string): Map<string, V> {
    return this.shards[SHARD_OF[shardHash(key)] as number] as Map<string, V>;
  }
}

/**
 * A hash of the key's last four characters, mod SHARES: the keys here end with their most varying
 * part (record ids and entry ids with a hex hash, order and snapshot keys with a decimal id).
 */
export function shardHash(key: string): number {
  let hash = 0;
  for (let i = Math.max(0, key.length - 4); i < key.length; i++) hash = (Math.imul(hash, 0x01000193) ^ key.charCodeAt(i)) >>> 0;
  return hash % SHARES;
}
