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
      return { ok: true };
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
    for (const [stream, indexes] of byStream) {
      try {
        await jsonlFile(ctx, stream).append(indexes.map((i) => records[i]!));
      } catch (error) {
        const failure = writeFailed(path.join(ctx.config.dir, `${stream}.jsonl`), error);
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
  try {
    const file = await writeRosterCsv(ctx.config.dir, record, ctx.config.csv);
    ctx.log.info({ file, rows: record.rows.length }, `roster written: ${file} (${record.rows.length} rows)`);
    return { status: 'done' };
  } catch (error) {
    return { status: 'retry', error: writeFailed(`roster-${record.date}.csv`, error) };
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

async function ensureDir(ctx: ConnectorContext<FileConfig>): Promise<void> {
  if (ctx.cache.get('dir') === ctx.config.dir) return;
  await makeDir(ctx.config.dir);
  ctx.cache.set('dir', ctx.config.dir);
}
