import { describe, expect, it } from 'vitest';
import { localDayStart } from './day-start.js';

describe('localDayStart', () => {
  it('is local midnight', () => {
    expect(localDayStart(Date.parse('2026-11-30T15:20:31.250Z'), 'UTC')).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(localDayStart(Date.parse('2026-11-30T15:20:31.250Z'), 'Europe/Warsaw')).toBe(Date.parse('2026-11-29T23:00:00Z'));
    expect(localDayStart(Date.parse('2026-11-30T23:30:00Z'), 'Europe/Warsaw')).toBe(Date.parse('2026-11-30T23:00:00Z'));
    expect(localDayStart(Date.parse('2026-11-30T03:00:00Z'), 'America/New_York')).toBe(Date.parse('2026-11-29T05:00:00Z'));
    expect(localDayStart(Date.parse('2026-11-30T12:00:00Z'), 'Asia/Kolkata')).toBe(Date.parse('2026-11-29T18:30:00Z'));
  });

  it('is local midnight on the days the clocks move', () => {
    // Warsaw: 2026-03-29 02:00 → 03:00 (midnight at UTC+1), 2026-10-25 03:00 → 02:00 (midnight at UTC+2).
    expect(localDayStart(Date.parse('2026-03-29T10:00:00Z'), 'Europe/Warsaw')).toBe(Date.parse('2026-03-28T23:00:00Z'));
    expect(localDayStart(Date.parse('2026-10-25T10:00:00Z'), 'Europe/Warsaw')).toBe(Date.parse('2026-10-24T22:00:00Z'));
    expect(localDayStart(Date.parse('2026-03-29T00:30:00Z'), 'Europe/Warsaw')).toBe(Date.parse('2026-03-28T23:00:00Z'));
  });
});
