import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createHistoryUpkeep, DEAD_REPLICA_DAYS, PEOPLE_REST } from './upkeep.js';

const DAY = 86_400_000;
const NOW = 100 * DAY;
const log = pino({ level: 'silent' });

describe('history upkeep', () => {
  it('forgets attempts after historyDays, and runs after 30 days or historyDays if longer', async () => {
    const asked: { attempts: number; runs: number }[] = [];
    const store = { history: { prune: async (before: { attempts: number; runs: number }) => (asked.push(before), 0) }, people: { refresh: async () => false }, replicas: { forget: async () => 0 } };
    await createHistoryUpkeep({ store, clock: { now: () => NOW } as never, log, historyDays: 14 }).prune();
    await createHistoryUpkeep({ store, clock: { now: () => NOW } as never, log, historyDays: 60 }).prune();
    expect(asked).toEqual([{ attempts: NOW - 14 * DAY, runs: NOW - 30 * DAY }, { attempts: NOW - 60 * DAY, runs: NOW - 60 * DAY }]);
  });

  it('forgets the rows of replicas whose last heartbeat is DEAD_REPLICA_DAYS old, and says how many', async () => {
    const asked: number[] = [];
    const lines: string[] = [];
    const store = { history: { prune: async () => 0 }, people: { refresh: async () => false }, replicas: { forget: async (before: number) => (asked.push(before), 2) } };
    const logged = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    await createHistoryUpkeep({ store, clock: { now: () => NOW } as never, log: logged, historyDays: 14 }).prune();
    expect(DEAD_REPLICA_DAYS).toBe(7);
    expect(asked).toEqual([NOW - 7 * DAY]);
    expect(lines.map((line) => JSON.parse(line) as { msg: string; replicas: number })).toMatchObject([{ msg: 'forgot replicas not seen for 7 days', replicas: 2 }]);
  });

  it('forgets a chunk per transaction until a chunk comes back short, all against the same times', async () => {
    let left = 7;
    const asked: { before: { attempts: number; runs: number }; limit: number }[] = [];
    const prune = async (before: { attempts: number; runs: number }, limit: number) => {
      asked.push({ before, limit });
      const gone = Math.min(left, limit);
      left -= gone;
      return gone;
    };
    let now = NOW;
    const clock = { now: () => (now += 1000), sleep: async () => {} };
    const upkeep = createHistoryUpkeep({ store: { history: { prune }, people: { refresh: async () => false }, replicas: { forget: async () => 0 } }, clock, log, historyDays: 14, pruneChunk: 3 });
    expect(await upkeep.prune()).toBe(7);
    expect(asked.map((a) => a.limit)).toEqual([3, 3, 3]);
    expect(new Set(asked.map((a) => JSON.stringify(a.before))).size).toBe(1);
  });

  it('walks each stream of the name index until it has caught up, and once more when asked during a walk', async () => {
    const steps: string[] = [];
    let left = 2;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const people = {
      refresh: async (stream: string) => {
        steps.push(stream);
        if (steps.length === 1) await gate;
        return stream === 'students' && --left > 0;
      },
    };
    const upkeep = createHistoryUpkeep({ store: { history: { prune: async () => 0 }, people, replicas: { forget: async () => 0 } }, clock: { now: () => NOW } as never, log, historyDays: 14 });
    const first = upkeep.refreshPeople();
    const second = upkeep.refreshPeople();
    release();
    await Promise.all([first, second]);
    expect(steps).toEqual(['students', 'students', 'users', 'students', 'users']);
  });

  it('rests after each step of a walk in proportion to how long the step took, and not after the last', async () => {
    let now = NOW;
    const slept: number[] = [];
    const stepMs = [30, 5, 12];
    let step = 0;
    const people = {
      refresh: async (stream: string) => {
        if (stream !== 'students') return false;
        now += stepMs[step]!;
        step += 1;
        return step < stepMs.length;
      },
    };
    const clock = { now: () => now, sleep: async (ms: number) => void slept.push(ms) };
    await createHistoryUpkeep({ store: { history: { prune: async () => 0 }, people, replicas: { forget: async () => 0 } }, clock: clock as never, log, historyDays: 14 }).refreshPeople();
    expect(step).toBe(3);
    expect(slept).toEqual([30 * PEOPLE_REST, 5 * PEOPLE_REST]);
  });
});
