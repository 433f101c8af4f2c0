/**
 * When the store checkpoints (a pure decision, STYLE 5). A checkpoint rewrites each changed collection
 * whole, so both triggers are proportional to the documents' size:
 * - after a write, once the WAL outgrows `minBytes` or twice the documents, whichever is more: a fixed
 *   trigger would rewrite a growing 400 MB snapshot every 64 MB of WAL during a big first poll;
 * - on the periodic timer, once the WAL holds a tenth of the documents: rewriting a 400 MB snapshot
 *   every few minutes because a poll changed a few records would cost more than replaying the WAL.
 * Either way the WAL stays within a constant factor of the data, and so does recovery's replay.
 */
export function checkpointDue(trigger: 'write' | 'timer', walBytes: number, docBytes: number, minBytes: number): boolean {
  if (walBytes <= 0) return false;
  return trigger === 'write' ? walBytes > Math.max(minBytes, 2 * docBytes) : walBytes >= docBytes / 10;
}
