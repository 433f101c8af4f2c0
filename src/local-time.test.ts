import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dateInZone, dayStartInZone, formatIsoInZone, parseWallTime, upstreamDateTimeToIso, wallTimeAt, wallTimeToInstant } from './local-time.js';

const WARSAW = 'Europe/Warsaw';

describe('upstreamDateTimeToIso', () => {
  it.each([
    ['winter time is UTC+1', '2026-01-15 10:30:00', WARSAW, '2026-01-15T10:30:00+01:00'],
    ['summer time is UTC+2', '2026-07-01 00:00:00', WARSAW, '2026-07-01T00:00:00+02:00'],
    ['the last second of a year', '2026-12-31 23:59:59', WARSAW, '2026-12-31T23:59:59+01:00'],
    ['a leap day', '2028-02-29 12:00:00', WARSAW, '2028-02-29T12:00:00+01:00'],
    ['a time skipped by spring-forward moves forward by the gap', '2026-03-29 02:30:00', WARSAW, '2026-03-29T03:30:00+02:00'],
    ['a time repeated by fall-back is the earlier instant', '2026-10-25 02:30:00', WARSAW, '2026-10-25T02:30:00+02:00'],
    ['just after the repeated hour', '2026-10-25 03:00:00', WARSAW, '2026-10-25T03:00:00+01:00'],
    ['UTC', '2026-07-01 08:00:00', 'UTC', '2026-07-01T08:00:00+00:00'],
    ['a negative offset', '2026-07-01 08:00:00', 'America/New_York', '2026-07-01T08:00:00-04:00'],
    ['a half-hour offset', '2026-07-01 08:00:00', 'Asia/Kolkata', '2026-07-01T08:00:00+05:30'],
  ])('%s', (_name, value, zone, expected) => {
    expect(upstreamDateTimeToIso(value, zone)).toBe(expected);
  });

  it.each([
    ['a MySQL zero date', '0000-00-00 00:00:00'],
    ['February 30th', '2026-02-30 10:00:00'],
    ['hour 24', '2026-01-01 24:00:00'],
    ['minute 60', '2026-01-01 10:60:00'],
    ['month 13', '2026-13-01 10:00:00'],
    ['an ISO string', '2026-01-01T10:00:00Z'],
    ['a date only', '2026-01-01'],
    ['trailing space', '2026-01-01 10:00:00 '],
    ['null', null],
    ['a number', 1767225600],
    ['empty', ''],
  ])('%s is not a date-time: null', (_name, value) => {
    expect(upstreamDateTimeToIso(value, WARSAW)).toBeNull();
  });
});

describe('wall time round trip', () => {
  const instants = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) }).map((ms) => Math.floor(ms / 1000) * 1000);
  const zones = fc.constantFrom(WARSAW, 'UTC', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/St_Johns');

  it('an instant → its wall time → the same instant, except in the repeated hour (then the earlier one)', () => {
    fc.assert(
      fc.property(instants, zones, (ms, zone) => {
        const back = wallTimeToInstant(wallTimeAt(ms, zone), zone);
        expect(back).toBeLessThanOrEqual(ms);
        expect(wallTimeAt(back, zone)).toEqual(wallTimeAt(ms, zone));
      }),
    );
  });

  it('the ISO string parses back to the same instant', () => {
    fc.assert(
      fc.property(instants, zones, (ms, zone) => {
        expect(Date.parse(formatIsoInZone(ms, zone))).toBe(ms);
      }),
    );
  });
});

describe('parseWallTime and dateInZone', () => {
  it('reads the fields', () => {
    expect(parseWallTime('2026-11-22 07:08:09')).toEqual({ year: 2026, month: 11, day: 22, hour: 7, minute: 8, second: 9 });
  });

  it('dates a UTC instant in the school zone: 23:30 UTC on 31 Dec is already 1 Jan in Warsaw', () => {
    expect(dateInZone(Date.parse('2026-12-31T23:30:00Z'), WARSAW)).toBe('2027-01-01');
    expect(dateInZone(Date.parse('2026-12-31T23:30:00Z'), 'UTC')).toBe('2026-12-31');
  });
});

describe('dayStartInZone', () => {
  it('is local midnight', () => {
    expect(dayStartInZone(Date.parse('2026-11-30T15:20:31.250Z'), 'UTC')).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-11-30T15:20:31.250Z'), WARSAW)).toBe(Date.parse('2026-11-29T23:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-11-30T23:30:00Z'), WARSAW)).toBe(Date.parse('2026-11-30T23:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-11-30T03:00:00Z'), 'America/New_York')).toBe(Date.parse('2026-11-29T05:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-11-30T12:00:00Z'), 'Asia/Kolkata')).toBe(Date.parse('2026-11-29T18:30:00Z'));
  });

  it('is local midnight on the days the clocks move', () => {
    // Warsaw: 2026-03-29 02:00 → 03:00 (midnight at UTC+1), 2026-10-25 03:00 → 02:00 (midnight at UTC+2).
    expect(dayStartInZone(Date.parse('2026-03-29T10:00:00Z'), WARSAW)).toBe(Date.parse('2026-03-28T23:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-10-25T10:00:00Z'), WARSAW)).toBe(Date.parse('2026-10-24T22:00:00Z'));
    expect(dayStartInZone(Date.parse('2026-03-29T00:30:00Z'), WARSAW)).toBe(Date.parse('2026-03-28T23:00:00Z'));
    // Santiago's clocks went from 00:00 to 01:00 on 2022-09-11: that day began at 01:00 local (04:00Z).
    expect(dayStartInZone(Date.parse('2022-09-11T15:00:00Z'), 'America/Santiago')).toBe(Date.parse('2022-09-11T04:00:00Z'));
  });
});
