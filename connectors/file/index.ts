import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { Connector, ConnectorContext, DeliveryOutcome } from '../../src/connectors/types.js';
import { BridgeError, describeError } from '../../src/errors.js';
import { makeDir, takenByFile } from '../../src/files/make-dir.js';
import type { RosterRecord } from '../../src/records.js';
import { JsonlFile } from './jsonl-file.js';
import { rosterFileName, writeRosterCsv } from './roster-csv.js';
import { fileConfigSchema, type FileConfig } from './schema.js';

/** Records per deliver call: one append and one fsync serve them all. */
const BATCH_SIZE = 500;

/**
 * The `file` connector (docs/connectors.md): each record as one JSON line in `<dir>/<stream>.jsonl`, a roster
 * export as `<dir>/roster-YYYY-MM-DD.csv`. Idempotent by record id across restarts; see README.md.
 */
export const fileConnector = {
  type: 'file',
  configSchema: fileConfigSchema,
  batchSize: () => BATCH_SIZE,
  // Appends to a file are serialized (one writer per file), so batches in parallel would only queue
  // behind each other and split the records into more, smaller appends and fsyncs.
  maxConcurrency: () => 1,
  // The files are this host's: one replica at a time writes them (each record id once per file).
  exclusive: () => true,

  async check(ctx) {
    try {
      await makeDir(ctx.config.dir);
      await access(ctx.config.dir, constants.W_OK);
      // A writable directory can still be full, or hold something in a file's way: what the last
      // write of each file met stands until one succeeds.
      const failing = [...problemsOf(ctx).values()];
      return failing.length === 0 ? { ok: true } : { ok: false, reason: `${failing.join('; ')}; deliveries wait until it can be written (free space on its disk?)` };
    } catch (error) {
      if (takenByFile(error)) return { ok: false, reason: `cannot make the directory ${ctx.config.dir}: a file takes its path; set this connector's dir to a directory` };
      return { ok: false, reason: `cannot write to ${ctx.config.dir}: ${describeError(error)}; fix its permissions or this connector's dir` };
    }
  },

  async deliver(ctx, records) {
    try {
      await ensureDir(ctx);
    } catch (error) {
      const failure = writeFailed(ctx.config.dir, error);
      return records.map(() => ({ status: 'retry', error: failure }));
    }
    const outcomes: DeliveryOutcome[] = records.map(() => ({ status: 'done' }));
    const byStream = new Map<string, number[]>();
    records.forEach((record, i) => {
      if (record.stream === 'roster') return;
      const list = byStream.get(record.stream) ?? [];
      list.push(i);
      byStream.set(record.stream, list);
    });
    const problems = problemsOf(ctx);
    for (const [stream, indexes] of byStream) {
      const file = path.join(ctx.config.dir, `${stream}.jsonl`);
      try {
        await jsonlFile(ctx, stream).append(indexes.map((i) => records[i]!));
        problems.delete(file);
      } catch (error) {
        const failure = writeFailed(file, error);
        problems.set(file, failure.message);
        for (const i of indexes) outcomes[i] = { status: 'retry', error: failure };
      }
    }
    for (let i = 0; i < records.length; i++) {
      if (records[i]!.stream === 'roster') outcomes[i] = await deliverRoster(ctx, records[i]!.record as RosterRecord);
    }
    return outcomes;
  },
} satisfies Connector<FileConfig>;

async function deliverRoster(ctx: ConnectorContext<FileConfig>, record: RosterRecord): Promise<DeliveryOutcome> {
  if (!rosterFileName(record)) {
    return { status: 'dead', error: new BridgeError('file.bad_record', `roster record ${record.id} has no YYYY-MM-DD date`) };
  }
  const name = `roster-${record.date}.csv`;
  try {
    const file = await writeRosterCsv(ctx.config.dir, record, ctx.config.csv);
    problemsOf(ctx).delete(name);
    ctx.log.info({ file, rows: record.rows.length }, `roster written: ${file} (${record.rows.length} rows)`);
    return { status: 'done' };
  } catch (error) {
    const failure = writeFailed(name, error);
    problemsOf(ctx).set(name, failure.message);
    return { status: 'retry', error: failure };
  }
}

function writeFailed(file: string, error: unknown): BridgeError {
  return new BridgeError('file.write_failed', `cannot write ${file}: ${describeError(error)}`, { retryable: true, cause: error });
}

/** One JsonlFile per file and connector instance, for the life of the process (it holds the id index). */
function jsonlFile(ctx: ConnectorContext<FileConfig>, stream: string): JsonlFile {
  const file = path.resolve(ctx.config.dir, `${stream}.jsonl`);
  const key = `jsonl:${file}`;
  let found = ctx.cache.get(key) as JsonlFile | undefined;
  if (!found) ctx.cache.set(key, (found = new JsonlFile(file)));
  return found;
}

/** Why the last write of each file failed, by file, until one succeeds: check() says it meanwhile. */
function problemsOf(ctx: ConnectorContext<FileConfig>): Map<string, string> {
  let problems = ctx.cache.get('problems') as Map<string, string> | undefined;
  if (!problems) ctx.cache.set('problems', (problems = new Map()));
  return problems;
}

async function ensureDir(ctx: ConnectorContext<FileConfig>): Promise<void> {
  if (ctx.cache.get('dir') === ctx.config.dir) return;
  await makeDir(ctx.config.dir);
  ctx.cache.set('dir', ctx.config.dir);
}
