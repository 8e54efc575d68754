// SLA arithmetic (issue 35), table-driven: due and warning times in business hours across DST
// changes in the inbox's zone, at schedule boundaries and with exceptions; resolution paused while
// pending; the check's warnings and breaches once. Pure functions, instants in and out.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BusinessHours } from '../../src/business-hours/schedule.js';
import { advance, NOTHING_DUE, nextCheck, type Policy, type SlaState, sortKey } from '../../src/sla/engine.js';

const OFFICE = [{ start: '09:00', end: '17:00' }];
const everyDay = (intervals: { start: string; end: string }[]) => ({
  mon: intervals,
  tue: intervals,
  wed: intervals,
  thu: intervals,
  fri: intervals,
  sat: intervals,
  sun: intervals,
});
const berlin = (weekly: BusinessHours['weekly'], exceptions: BusinessHours['exceptions'] = []): BusinessHours => ({
  timezone: 'Europe/Berlin',
  weekly,
  exceptions,
});
const policy = (first: number | null, next: number | null, resolution: number | null): Policy => ({ first_response: first, next_response: next, resolution });

function started(hours: BusinessHours, at: string, p: Policy) {
  return advance(null, { kind: 'customer_message', at: new Date(at) }, { active: true, closed: false, policy: p, hours }).state!;
}

describe('SLA engine', () => {
  const cases: { name: string; hours: BusinessHours; at: string; minutes: number; due: string; warn: string }[] = [
    {
      name: 'spring forward (Sun 29 Mar 2026): a day of 23 hours counts 23 hours open',
      hours: berlin(everyDay([{ start: '00:00', end: '24:00' }])),
      at: '2026-03-28T21:00:00Z', // Sat 22:00 CET
      minutes: 240,
      due: '2026-03-29T01:00:00.000Z', // Sun 03:00 CEST: four real hours later
      warn: '2026-03-29T00:12:00.000Z',
    },
    {
      name: 'spring forward with office hours: Saturday 16:00 CET + Sunday from 09:00 CEST',
      hours: berlin(everyDay(OFFICE)),
      at: '2026-03-28T15:00:00Z',
      minutes: 120,
      due: '2026-03-29T08:00:00.000Z', // Sun 10:00 CEST
      warn: '2026-03-29T07:36:00.000Z',
    },
    {
      name: 'fall back (Sun 25 Oct 2026): Saturday 16:00 CEST + Sunday from 09:00 CET',
      hours: berlin(everyDay(OFFICE)),
      at: '2026-10-24T14:00:00Z',
      minutes: 120,
      due: '2026-10-25T09:00:00.000Z', // Sun 10:00 CET
      warn: '2026-10-25T08:36:00.000Z',
    },
    {
      name: 'fall back, always open: the 25-hour day counts its extra hour',
      hours: berlin(everyDay([{ start: '00:00', end: '24:00' }])),
      at: '2026-10-24T22:00:00Z', // Sun 00:00 CEST
      minutes: 24 * 60,
      due: '2026-10-25T22:00:00.000Z', // Sun 23:00 CET: 24 real hours
      warn: '2026-10-25T17:12:00.000Z',
    },
    {
      name: 'a message at closing time starts counting at the next opening',
      hours: berlin({ mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE }),
      at: '2026-11-06T16:00:00Z', // Fri 17:00 CET, just closed
      minutes: 60,
      due: '2026-11-09T09:00:00.000Z', // Mon 10:00
      warn: '2026-11-09T08:48:00.000Z',
    },
    {
      name: 'the target ends exactly at closing time: due then, not at the next opening',
      hours: berlin({ mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE }),
      at: '2026-11-06T15:00:00Z', // Fri 16:00
      minutes: 60,
      due: '2026-11-06T16:00:00.000Z',
      warn: '2026-11-06T15:48:00.000Z',
    },
    {
      name: 'an exception closes Monday and shortens Tuesday',
      hours: berlin({ mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE }, [
        { date: '2026-11-09', intervals: [] },
        { date: '2026-11-10', intervals: [{ start: '10:00', end: '11:00' }] },
      ]),
      at: '2026-11-06T15:00:00Z', // Fri 16:00: 60 min Friday, 60 Tuesday 10–11, 60 Wednesday from 09:00
      minutes: 180,
      due: '2026-11-11T09:00:00.000Z',
      warn: '2026-11-11T08:24:00.000Z', // 144 min: Fri 60, Tue 60, Wed 24
    },
    {
      name: 'no schedule: calendar time',
      hours: berlin(null),
      at: '2026-11-06T15:00:00Z',
      minutes: 90,
      due: '2026-11-06T16:30:00.000Z',
      warn: '2026-11-06T16:12:00.000Z',
    },
  ];
  for (const c of cases)
    test(c.name, () => {
      const st = started(c.hours, c.at, policy(c.minutes, null, null));
      assert.equal(st.first_response?.due_at, c.due);
      assert.equal(st.first_response?.warn_at, c.warn);
      assert.equal(sortKey(st, false), c.due);
      assert.equal(nextCheck(st, false)?.toISOString(), c.warn);
    });

  test('resolution pauses while pending across the DST night and resumes with what was left', () => {
    const hours = berlin(everyDay(OFFICE));
    const p = policy(null, null, 240);
    let st: SlaState = started(hours, '2026-03-27T15:00:00Z', p); // Fri 16:00 CET: 60 min used by 17:00
    const pending = { active: false, closed: false, policy: p, hours };
    st = advance(st, { kind: 'status', at: new Date('2026-03-28T08:00:00Z') }, pending).state!; // Sat 09:00 CET
    assert.equal(st.resolution?.due_at, null);
    assert.equal(sortKey(st, false), NOTHING_DUE);
    const open = { active: true, closed: false, policy: p, hours };
    st = advance(st, { kind: 'status', at: new Date('2026-03-29T09:00:00Z') }, open).state!; // Sun 11:00 CEST
    // 180 minutes left from Sunday 11:00 CEST: 14:00 CEST = 12:00Z.
    assert.equal(st.resolution?.due_at, '2026-03-29T12:00:00.000Z');
    const closed = advance(st, { kind: 'status', at: new Date('2026-03-29T11:00:00Z') }, { active: false, closed: true, policy: p, hours });
    assert.deepEqual(closed.outcomes, [{ target: 'resolution', due_at: '2026-03-29T12:00:00.000Z', outcome: 'met', at: '2026-03-29T11:00:00.000Z' }]);
    assert.equal(sortKey(closed.state, true), NOTHING_DUE);
  });

  test('checks: a warning at 80 %, a breach at the due time, each once; a late reply meets without a second breach', () => {
    const hours = berlin(null);
    const p = policy(100, 50, null);
    const s = { active: true, closed: false, policy: p, hours };
    let st = started(hours, '2026-11-06T10:00:00Z', p);
    const check = (at: string) => {
      const r = advance(st, { kind: 'check', at: new Date(at) }, s);
      st = r.state!;
      return r;
    };
    assert.deepEqual(check('2026-11-06T11:19:00Z').notices, []);
    assert.deepEqual(
      check('2026-11-06T11:20:00Z').notices.map((n) => n.kind),
      ['warning'],
    );
    assert.deepEqual(check('2026-11-06T11:30:00Z').notices, []);
    const breach = check('2026-11-06T11:40:00Z');
    assert.deepEqual(
      breach.notices.map((n) => [n.target, n.kind]),
      [['first_response', 'breached']],
    );
    assert.deepEqual(breach.outcomes, [{ target: 'first_response', due_at: '2026-11-06T11:40:00.000Z', outcome: 'breached', at: '2026-11-06T11:40:00.000Z' }]);
    assert.deepEqual(check('2026-11-06T12:00:00Z').notices, []);
    assert.equal(nextCheck(st, false), null);
    const replied = advance(st, { kind: 'team_reply', at: new Date('2026-11-06T12:00:00Z') }, s);
    assert.deepEqual(replied.outcomes, []);
    assert.equal(replied.state?.first_response?.met_at, '2026-11-06T12:00:00.000Z');
    // Waiting on the customer counts for nothing: the next response starts at their message.
    const again = advance(replied.state, { kind: 'customer_message', at: new Date('2026-11-09T10:00:00Z') }, s);
    assert.equal(again.state?.next_response?.started_at, '2026-11-09T10:00:00.000Z');
    assert.equal(again.state?.next_response?.due_at, '2026-11-09T10:50:00.000Z');
  });

  test('no policy and no state: nothing starts', () => {
    const r = advance(
      null,
      { kind: 'customer_message', at: new Date('2026-11-06T10:00:00Z') },
      { active: true, closed: false, policy: null, hours: berlin(null) },
    );
    assert.equal(r.state, null);
  });
});
