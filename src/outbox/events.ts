import type { Logger } from 'pino';
import type { BridgeError } from '../errors.js';
import type { Delivery } from '../store/index.js';

export type OutboxEvent = 'delivered' | 'retry' | 'dead';
export interface OutboxEventPayload {
  /** The delivery as the store recorded it after the attempt. */
  delivery: Delivery;
  error?: BridgeError;
}
type Listener = (payload: OutboxEventPayload) => void;

/** Typed outbox events, emitted once the attempt's outcome is durable. A throwing listener is logged, not fatal. */
export class OutboxEvents {
  private readonly listeners = new Map<OutboxEvent, Set<Listener>>();

  constructor(private readonly log: Logger) {}

  on(event: OutboxEvent, listener: Listener): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  emit(event: OutboxEvent, payload: OutboxEventPayload): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        listener(payload);
      } catch (error) {
        this.log.error({ err: error, event }, 'outbox listener threw');
      }
    }
  }
}
