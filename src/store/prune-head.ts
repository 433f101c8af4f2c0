/**
 * The statement that forgets old history rows a chunk at a time on both engines: of the first
 * `limit` rows of `table` by `id` (which follows their time), those before the first whose `time`
 * is at or after `before`. It touches only the rows it reads, with no index on the time; a row
 * older than one kept before it (a clock set back) goes once that one has.
 */
export function pruneHead(table: string, id: string, time: string, params: { before: string; limit: string }): string {
  return `WITH head AS (SELECT ${id}, ${time} FROM ${table} ORDER BY ${id} LIMIT ${params.limit})
    DELETE FROM ${table} WHERE ${id} < COALESCE((SELECT min(${id}) FROM head WHERE ${time} >= ${params.before}), (SELECT max(${id}) + 1 FROM head))`;
}
