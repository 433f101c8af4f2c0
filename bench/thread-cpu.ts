import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of each thread of this process (Linux: /proc/self/task), in clock ticks of 10 ms, by
 * thread id: benches take it before and after a window to see which thread was busy (the main
 * thread has the process id).
 */
export function threadTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return ticks;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(tid), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return ticks;
}

/** Busy share of one core per thread between two readings over `ms`, busiest first, main thread marked. */
export function threadShares(before: Map<number, number>, after: Map<number, number>, ms: number): string {
  const rows = [...after]
    .map(([tid, t]) => ({ tid, share: ((t - (before.get(tid) ?? 0)) * 10) / ms }))
    .filter((r) => r.share >= 0.01)
    .sort((a, b) => b.share - a.share);
  return rows.map((r) => `${r.tid === process.pid ? 'main' : r.tid} ${(100 * r.share).toFixed(0)}%`).join(', ');
}

/** CPU ticks of this process's descendants whose command `counted` takes (PostgreSQL's postmaster and backends, say). */
export function descendantTicks(counted: (command: string) => boolean = () => true): number {
  let total = 0;
  const visit = (pid: number): void => {
    let children: number[] = [];
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        children = children.concat(readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      }
    } catch {
      return;
    }
    for (const child of children) {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (counted(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')))) total += Number(fields[11]) + Number(fields[12]);
      } catch {
        continue;
      }
      visit(child);
    }
  };
  visit(process.pid);
  return total;
}
