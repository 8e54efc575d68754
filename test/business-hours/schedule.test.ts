// Business-hours arithmetic, table-driven: schedule boundaries (start inclusive, end exclusive),
// lunch breaks, weekends, dated exceptions (a holiday, an early closing), DST changes in the inbox's
// zone (Europe/Berlin and America/New_York, both directions, and a start time the zone skips), and
// "now" moved through the clock module instead of slept on.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addBusinessMinutes,
  type BusinessHours,
  businessMsBetween,
  isKnownZone,
  isOpen,
  nextOpening,
  zonedInstant,
} from '../../src/business-hours/schedule.js';
import { HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';

const OFFICE = [
  { start: '09:00', end: '12:00' },
  { start: '13:00', end: '17:00' },
];
const berlin: BusinessHours = {
  timezone: 'Europe/Berlin',
  weekly: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE, sun: [{ start: '01:00', end: '04:00' }] },
  exceptions: [
    { date: '2026-12-24', intervals: [{ start: '09:00', end: '12:00' }] },
    { date: '2026-12-25', intervals: [] },
  ],
};
const newYork: BusinessHours = {
  timezone: 'America/New_York',
  weekly: { sun: [{ start: '00:00', end: '24:00' }], mon: [{ start: '02:30', end: '05:00' }] },
  exceptions: [],
};
const always: BusinessHours = { timezone: 'Europe/Berlin', weekly: null, exceptions: [] };
const never: BusinessHours = { timezone: 'Europe/Berlin', weekly: {}, exceptions: [] };

const at = (s: string) => new Date(s);

describe('business hours', () => {
  test('open or not, at the boundaries (Berlin in winter is UTC+1)', () => {
    const cases: [string, boolean, string][] = [
      ['2026-11-02T07:59:59Z', false, 'Monday 08:59:59, a second before opening'],
      ['2026-11-02T08:00:00Z', true, 'Monday 09:00 sharp'],
      ['2026-11-02T10:59:59Z', true, '11:59:59'],
      ['2026-11-02T11:00:00Z', false, '12:00: lunch (the end is not open)'],
      ['2026-11-02T12:00:00Z', true, '13:00 after lunch'],
      ['2026-11-02T16:00:00Z', false, '17:00 closing'],
      ['2026-11-07T10:00:00Z', false, 'Saturday'],
      ['2026-12-24T10:30:00Z', true, 'Christmas Eve morning (exception)'],
      ['2026-12-24T12:30:00Z', false, 'Christmas Eve afternoon: closed early'],
      ['2026-12-25T09:00:00Z', false, 'Christmas Day, a Friday: closed by exception'],
    ];
    for (const [when, open, why] of cases) assert.equal(isOpen(berlin, at(when)), open, why);
    assert.equal(isOpen(always, at('2026-11-07T03:00:00Z')), true, 'no schedule: always open');
    assert.equal(isOpen(never, at('2026-11-02T10:00:00Z')), false, 'a schedule with no intervals: never open');
  });

  test('the next opening', () => {
    const cases: [BusinessHours, string, string | null, string][] = [
      [berlin, '2026-11-02T08:30:00Z', '2026-11-02T08:30:00.000Z', 'open now: now'],
      [berlin, '2026-11-02T11:15:00Z', '2026-11-02T12:00:00.000Z', 'lunch: 13:00'],
      [berlin, '2026-11-06T16:00:00Z', '2026-11-08T00:00:00.000Z', 'Friday 17:00: Sunday 01:00'],
      [berlin, '2026-11-08T03:00:00Z', '2026-11-09T08:00:00.000Z', 'Sunday 04:00: Monday 09:00'],
      [berlin, '2026-12-24T11:00:00Z', '2026-12-27T00:00:00.000Z', 'Christmas Eve noon: past the holiday, Sunday 01:00'],
      [always, '2026-11-07T03:00:00Z', '2026-11-07T03:00:00.000Z', 'always open'],
      [never, '2026-11-07T03:00:00Z', null, 'never opens'],
    ];
    for (const [hours, when, next, why] of cases) assert.equal(nextOpening(hours, at(when))?.toISOString() ?? null, next, why);
  });

  test('adding business minutes skips lunch, nights, weekends and holidays', () => {
    const cases: [string, number, string, string][] = [
      ['2026-11-02T08:00:00Z', 60, '2026-11-02T09:00:00.000Z', 'an hour from opening'],
      ['2026-11-02T10:30:00Z', 60, '2026-11-02T12:30:00.000Z', '11:30 + 1 h: lunch skipped'],
      ['2026-11-06T15:30:00Z', 60, '2026-11-08T00:30:00.000Z', 'Friday 16:30 + 1 h: Sunday 01:30'],
      ['2026-11-07T10:00:00Z', 0, '2026-11-08T00:00:00.000Z', 'zero minutes from a closed time: the opening'],
      ['2026-12-24T10:45:00Z', 30, '2026-12-27T00:15:00.000Z', 'Christmas Eve 11:45 + 30 min: 15 min left that day, then Sunday'],
    ];
    for (const [from, minutes, due, why] of cases) assert.equal(addBusinessMinutes(berlin, at(from), minutes)?.toISOString(), due, why);
    assert.equal(addBusinessMinutes(never, at('2026-11-02T10:00:00Z'), 5), null);
    assert.equal(addBusinessMinutes(always, at('2026-11-02T10:00:00Z'), 5)?.toISOString(), '2026-11-02T10:05:00.000Z');
  });

  test('DST: the days the clocks move have the hours their clocks show', () => {
    const cases: [BusinessHours, string, string, number, string][] = [
      // Sunday 01:00–04:00 Berlin: 2 h when the clocks skip 02:00–03:00, 4 h when 02:00–03:00 repeats.
      [berlin, '2026-03-28T22:00:00Z', '2026-03-29T06:00:00Z', 2 * HOUR, 'Berlin spring forward'],
      [berlin, '2026-10-24T22:00:00Z', '2026-10-25T06:00:00Z', 4 * HOUR, 'Berlin fall back'],
      // A whole Sunday in New York: 23 h in March, 25 h in November.
      [newYork, '2026-03-08T04:00:00Z', '2026-03-09T04:00:00Z', 23 * HOUR, 'New York spring forward'],
      [newYork, '2026-11-01T03:00:00Z', '2026-11-02T05:00:00Z', 25 * HOUR, 'New York fall back'],
    ];
    for (const [hours, from, to, ms, why] of cases) assert.equal(businessMsBetween(hours, at(from), at(to)), ms, why);
    // 02:30 does not exist in Berlin on 2026-03-29: it is 03:30 CEST, the time moved by the gap.
    assert.equal(zonedInstant({ year: 2026, month: 3, day: 29 }, 150, 'Europe/Berlin').toISOString(), '2026-03-29T01:30:00.000Z');
    // Nor in New York on 2026-03-08 (the gap is 02:00–03:00 EST→EDT).
    assert.equal(zonedInstant({ year: 2026, month: 3, day: 8 }, 150, 'America/New_York').toISOString(), '2026-03-08T07:30:00.000Z');
    // Counting across the spring night: Sunday 01:30 Berlin + 60 business minutes = 03:30 CEST.
    assert.equal(addBusinessMinutes(berlin, at('2026-03-29T00:30:00Z'), 60)?.toISOString(), '2026-03-29T01:30:00.000Z');
  });

  test('business time between two instants', () => {
    const cases: [string, string, number, string][] = [
      ['2026-11-02T07:00:00Z', '2026-11-02T17:00:00Z', 7 * HOUR, 'a whole Monday'],
      ['2026-11-02T10:30:00Z', '2026-11-02T12:30:00Z', HOUR, 'across lunch'],
      ['2026-11-06T15:00:00Z', '2026-11-09T09:00:00Z', HOUR + 3 * HOUR + HOUR, 'Friday 16:00 to Monday 10:00 (Sunday 01–04)'],
      ['2026-11-02T12:00:00Z', '2026-11-02T10:00:00Z', 0, 'backwards is nothing'],
    ];
    for (const [from, to, ms, why] of cases) assert.equal(businessMsBetween(berlin, at(from), at(to)), ms, why);
  });

  test('with the clock module moved: open and closed as time passes', () => {
    const clock = new ManualClock(at('2026-11-02T07:30:00Z'));
    const seen: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      seen.push(isOpen(berlin, clock.now()));
      clock.advance(2 * HOUR + 30 * MINUTE);
    }
    // Monday 08:30, 11:00, 13:30, 16:00, 18:30 and 21:00 in Berlin.
    assert.deepEqual(seen, [false, true, true, true, false, false]);
    assert.equal(isKnownZone('Europe/Istanbul'), true);
    assert.equal(isKnownZone('Mars/Olympus_Mons'), false);
  });
});
