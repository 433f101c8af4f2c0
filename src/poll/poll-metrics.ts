import type { Registry } from 'prom-client';
import { counter, gauge, histogram } from '../metrics.js';
import type { SnapshotStore } from '../store/index.js';
import type { PolledStreamName } from '../streams/index.js';

/** The poll's Prometheus metrics (README "Observe"), created once per registry; the gauges of the streams it polls. */
export function createPollMetrics(registry: Registry, snapshot: Pick<SnapshotStore, 'size' | 'createdPending'>, streams: readonly PolledStreamName[]) {
  return {
    cycles: counter(registry, 'schoolbridge_poll_cycles_total', 'Poll cycles by outcome (ok, aborted, failed)', ['outcome']),
    duration: histogram(registry, 'schoolbridge_poll_cycle_duration_seconds', 'Duration of poll cycles', ['outcome'],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]),
    fetched: counter(registry, 'schoolbridge_poll_records_fetched_total', 'Records fetched from the upstream by stream', ['stream']),
    changes: counter(registry, 'schoolbridge_poll_changes_total', 'Change records detected by stream and op', ['stream', 'op']),
    aborted: counter(registry, 'schoolbridge_poll_aborted_total', 'Poll cycles aborted by the guard, by reason and stream', ['reason', 'stream']),
    lastSuccess: gauge(registry, 'schoolbridge_poll_last_success_timestamp_seconds', 'End of the last successful poll cycle (Unix time)'),
    snapshot: gauge(registry, 'schoolbridge_poll_snapshot_records', 'Records in the snapshot by stream', ['stream'], async function collect() {
      for (const stream of streams) {
        const size = await snapshot.size(stream).catch(() => undefined);
        if (size !== undefined) this.set({ stream }, size);
      }
    }),
    backlog: gauge(registry, 'schoolbridge_poll_backlog_records', 'Created changes of a first cycle not delivered yet (all connectors), by stream', ['stream'], async function collect() {
      for (const stream of streams) {
        const pending = await snapshot.createdPending(stream).catch(() => undefined);
        if (pending !== undefined) this.set({ stream }, pending);
      }
    }),
  };
}

export type PollMetrics = ReturnType<typeof createPollMetrics>;
