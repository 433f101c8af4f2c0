const DAY_MS = 86_400_000;

/**
 * When the local day of `nowMs` began in `timeZone` (epoch ms). On a day whose clocks moved (summer
 * time), the hours before the move count at their own offset, so the day still starts at 00:00.
 */
export function localDayStart(nowMs: number, timeZone: string): number {
  const clock = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const local = (ms: number) => {
    const part = Object.fromEntries(clock.formatToParts(ms).map((p) => [p.type, p.value]));
    const sinceMidnight = ((Number(part.hour) * 60 + Number(part.minute)) * 60 + Number(part.second)) * 1000 + (((ms % 1000) + 1000) % 1000);
    return { date: `${part.year}-${part.month}-${part.day}`, sinceMidnight };
  };
  const now = local(nowMs);
  const guess = nowMs - now.sinceMidnight;
  // Off by the day's move of the clocks: the guess is then late yesterday or early today.
  const there = local(guess);
  return there.date === now.date ? guess - there.sinceMidnight : guess + (DAY_MS - there.sinceMidnight);
}
