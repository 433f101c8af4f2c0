import type { Fault } from './types.js';

/**
 * The faults waiting for their requests. A request takes at most one latency fault and one other
 * fault, the first matching of each in the order they were injected; each use counts down `times`.
 * Only API routes (`/api/v2/...`) are faulted, never the control API.
 */
export interface TakenFaults {
  latencyMs: number;
  fault: Exclude<Fault, { kind: 'latency' }> | undefined;
}

export interface FaultBook {
  add(fault: Fault): void;
  clear(): void;
  list(): Fault[];
  take(method: string, path: string): TakenFaults;
}

interface Entry {
  fault: Fault;
  remaining: number;
}

export function routeMatches(route: string | undefined, method: string, path: string): boolean {
  if (route === undefined || route === '' || route === '*') return true;
  const space = route.indexOf(' ');
  if (space < 0) return route === path;
  return route.slice(0, space).toUpperCase() === method.toUpperCase() && route.slice(space + 1).trim() === path;
}

export function createFaultBook(): FaultBook {
  let entries: Entry[] = [];

  const takeFirst = (method: string, path: string, latency: boolean): Fault | undefined => {
    const entry = entries.find(
      (candidate) => (candidate.fault.kind === 'latency') === latency && routeMatches(candidate.fault.route, method, path),
    );
    if (!entry) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) entries = entries.filter((candidate) => candidate !== entry);
    return entry.fault;
  };

  return {
    add(fault) {
      const times = fault.times ?? 1;
      const remaining = times === 'always' ? Number.POSITIVE_INFINITY : times;
      if (!(remaining >= 1)) throw new RangeError(`fault times must be at least 1 or 'always', got ${String(times)}`);
      entries.push({ fault: { ...fault }, remaining });
    },
    clear() {
      entries = [];
    },
    list() {
      return entries.map((entry) => ({ ...entry.fault }));
    },
    take(method, path) {
      if (!path.startsWith('/api/')) return { latencyMs: 0, fault: undefined };
      const latency = takeFirst(method, path, true);
      const fault = takeFirst(method, path, false) as TakenFaults['fault'];
      return { latencyMs: latency?.kind === 'latency' ? Math.max(0, latency.ms) : 0, fault };
    },
  };
}
