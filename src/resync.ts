import type { Clock } from './clock.js';
import type { ConnectorConfig } from './config/index.js';
import { BridgeError } from './errors.js';
import { createdChangeJson } from './records.js';
import { SNAPSHOT_STREAMS, type Enqueue, type Key, type OutboxStore, type SnapshotStore, type SnapshotStream } from './store/index.js';

/**
 * `schoolbridge resync`: the current snapshot — every record of the polled streams as the last poll
 * saw it — delivered to one connector, for a connector or a Sheets tab added later, or a receiver that lost
 * its data. Each record is a `created` change with the id `<stream>:<key>:<chain>`, the chain being
 * the one of the key's last change: the same state always gives the same id, so a connector that
 * already holds it (or a second resync) changes nothing, and a real change of the key later has a new
 * id. Records go through the outbox in the key's order like any other. Keys no longer in the
 * snapshot are not sent: a receiver's rows for deleted records stay as they are.
 */
export interface ResyncRequest {
  connector: string;
  /** The streams to send; default: the snapshot streams the connector takes. */
  streams?: readonly string[];
}

export interface ResyncProgress {
  stream: SnapshotStream;
  /** Records of the stream read so far, and how many the snapshot holds. */
  read: number;
  total: number;
  enqueued: number;
}

export interface ResyncResult {
  connector: string;
  streams: Partial<Record<SnapshotStream, { records: number; enqueued: number }>>;
}

export interface ResyncDeps {
  connectors: readonly ConnectorConfig[];
  snapshot: Pick<SnapshotStore, 'scan' | 'size'>;
  outbox: Pick<OutboxStore, 'enqueue'>;
  /** Wakes the delivery workers after each page. */
  notify(): void;
  clock: Clock;
}

const PAGE = 500;

/** Which streams to send: checked against the connector's own, with the fix in the message. */
export function resyncStreams(connectors: readonly ConnectorConfig[], request: ResyncRequest): SnapshotStream[] {
  const connector = connectors.find((c) => c.name === request.connector);
  if (!connector) {
    throw new BridgeError('resync.not_found', `no connector "${request.connector}" in the config (connectors: ${connectors.map((c) => c.name).join(', ') || 'none'})`);
  }
  const taken = SNAPSHOT_STREAMS.filter((stream) => (connector.streams as readonly string[]).includes(stream));
  const asked = request.streams?.length ? request.streams : taken;
  for (const stream of asked) {
    if (!(SNAPSHOT_STREAMS as readonly string[]).includes(stream)) {
      // A stream the connector takes but no poll keeps (invoices, events): there is no snapshot of it.
      throw new BridgeError('resync.invalid_stream', `"${stream}" is not a polled stream: resync sends the snapshot of ${SNAPSHOT_STREAMS.join(', ')} (the roster: export roster; webhook events are not kept as a snapshot)`);
    }
    if (!taken.includes(stream as SnapshotStream)) {
      throw new BridgeError('resync.invalid_stream', `connector "${connector.name}" does not take "${stream}" (it takes ${connector.streams.join(', ')})`);
    }
  }
  if (asked.length === 0) throw new BridgeError('resync.invalid_stream', `connector "${connector.name}" takes none of the polled streams (${SNAPSHOT_STREAMS.join(', ')}): there is nothing to resync (the roster: export roster)`);
  return asked as SnapshotStream[];
}

export async function resync(deps: ResyncDeps, request: ResyncRequest, onProgress: (progress: ResyncProgress) => void = () => {}): Promise<ResyncResult> {
  const streams = resyncStreams(deps.connectors, request);
  const detectedAt = new Date(deps.clock.now()).toISOString();
  const result: ResyncResult = { connector: request.connector, streams: {} };
  for (const stream of streams) {
    const total = await deps.snapshot.size(stream);
    const done = { records: 0, enqueued: 0 };
    result.streams[stream] = done;
    onProgress({ stream, read: 0, total, enqueued: 0 });
    for (let after: Key | undefined; ; ) {
      const rows = await deps.snapshot.scan(stream, after, PAGE);
      if (rows.length === 0) break;
      const page: Enqueue[] = rows.map((row) => ({
        id: `${stream}:${row.key}:${row.chain}`, stream, orderKey: `${stream}:${row.key}`, connectors: [request.connector],
        json: createdChangeJson({ stream, key: row.key, chain: row.chain, detectedAt, text: row.body }),
      }));
      done.enqueued += await deps.outbox.enqueue(page);
      done.records += rows.length;
      deps.notify();
      after = rows[rows.length - 1]!.key;
      onProgress({ stream, read: done.records, total, enqueued: done.enqueued });
    }
  }
  return result;
}
