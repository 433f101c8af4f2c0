/**
 * Counts things per local calendar day ("events received today"). Pure apart from its small state:
 * the time is passed in, and a new day starts the counts again from zero.
 */
export interface DailyTally<K extends string> {
  add(kind: K, nowMs: number): void;
  today(nowMs: number): Record<K, number>;
}

export function createDailyTally<K extends string>(kinds: readonly K[], timeZone: string): DailyTally<K> {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const zero = () => Object.fromEntries(kinds.map((k) => [k, 0])) as Record<K, number>;
  let day = '';
  let minute = -1;
  let counts = zero();
  const roll = (nowMs: number) => {
    // Formatting a date costs microseconds on every webhook; a local day can only change on a minute.
    const thisMinute = Math.floor(nowMs / 60_000);
    if (thisMinute === minute) return;
    minute = thisMinute;
    const current = format.format(nowMs);
    if (current !== day) {
      day = current;
      counts = zero();
    }
  };
  return {
    add(kind, nowMs) {
      roll(nowMs);
      counts[kind] += 1;
    },
    today(nowMs) {
      roll(nowMs);
      return { ...counts };
    },
  };
}
