/**
 * The delivery retry schedule. The upstream documents only "exponential back-off, for up to 3 days"; the
 * sandbox waits 30 s after the first failure, doubles each time up to 6 h, and stops once the next
 * wait would end past 3 days after the first attempt: 20 retries, 21 attempts in all.
 * `timeScale` multiplies every wait, so 0.00001 runs the whole 3 days in about 2.6 s.
 */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
export const FIRST_RETRY_MS = 30_000;
export const MAX_RETRY_MS = 6 * 60 * 60 * 1000;

/** Waits (ms) before retry 1, 2, …; their sum stays within the 3-day window. */
export function deliverySchedule(timeScale = 1): number[] {
  const delays: number[] = [];
  let total = 0;
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    if (total + delay > RETRY_WINDOW_MS) break;
    total += delay;
    delays.push(delay * timeScale);
  }
  return delays;
}

/** The wait before the attempt after `attempt` (1-based), or undefined when the schedule is over. */
export function nextRetryDelay(schedule: readonly number[], attempt: number): number | undefined {
  return schedule[attempt - 1];
}
