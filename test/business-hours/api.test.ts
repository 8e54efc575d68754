// GET/PUT /v1/inboxes/{id}/hours against the real server: the default (always open), a schedule
// with exceptions, open_now and next_opening on the moved clock, every validation error named by
// its field with nothing changed, and who may change it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const OFFICE = [
  { start: '13:00', end: '17:00' },
  { start: '09:00', end: '12:00' },
];

describe('business hours API', () => {
  const clock = new ManualClock(new Date('2026-11-06T15:30:00Z')); // Friday 18:30 in Istanbul
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    s = await startTestServer({ clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const tz = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.ownerToken, body: { timezone: 'Europe/Istanbul' } });
    assert.equal(tz.status, 200, JSON.stringify(tz.body));
  });
  after(() => s.stop());

  test('without a schedule the inbox is always open', async () => {
    const r = await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      inbox_id: seed.inboxId,
      timezone: 'Europe/Istanbul',
      weekly: null,
      exceptions: [],
      open_now: true,
      next_opening: '2026-11-06T15:30:00.000Z',
      updated_at: null,
    });
  });

  test('a weekly schedule with exceptions; open_now and next_opening follow the clock', async () => {
    const body = {
      weekly: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE },
      exceptions: [
        { date: '2026-11-09', intervals: [] },
        { date: '2026-11-10', intervals: [{ start: '10:00', end: '14:00' }] },
      ],
    };
    const r = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.ownerToken, body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.weekly.mon, [
      { start: '09:00', end: '12:00' },
      { start: '13:00', end: '17:00' },
    ]);
    assert.equal(r.body.open_now, false);
    // Monday the 9th is closed by exception; Tuesday opens at 10:00 Istanbul (07:00Z).
    assert.equal(r.body.next_opening, '2026-11-10T07:00:00.000Z');
    clock.set(new Date('2026-11-10T08:00:00Z'));
    const now = await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey });
    assert.equal(now.body.open_now, true);
    assert.equal(now.body.next_opening, '2026-11-10T08:00:00.000Z');
    assert.equal(now.body.updated_at, '2026-11-06T15:30:00.000Z');
  });

  test('bad settings: 400 with each field named, nothing changed', async () => {
    const before = (await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey })).body;
    const cases: [unknown, string][] = [
      [
        {
          weekly: {
            mon: [
              { start: '09:00', end: '12:00' },
              { start: '11:00', end: '13:00' },
            ],
          },
        },
        'weekly.mon.1',
      ],
      [{ weekly: { tue: [{ start: '9:00', end: '12:00' }] } }, 'weekly.tue.0.start'],
      [{ weekly: { wed: [{ start: '12:00', end: '09:00' }] } }, 'weekly.wed.0.end'],
      [{ weekly: { thu: [{ start: '09:00', end: '24:30' }] } }, 'weekly.thu.0.end'],
      [{ weekly: { fri: [{ start: '24:00', end: '24:00' }] } }, 'weekly.fri.0.start'],
      [{ weekly: null, exceptions: [{ date: '2026-02-30', intervals: [] }] }, 'exceptions.0.date'],
      [
        {
          weekly: null,
          exceptions: [
            { date: '2026-12-24', intervals: [] },
            { date: '2026-12-24', intervals: [] },
          ],
        },
        'exceptions.1.date',
      ],
      [
        {
          weekly: { mon: [] },
          exceptions: [
            {
              date: '2026-12-31',
              intervals: [
                { start: '10:00', end: '12:00' },
                { start: '09:00', end: '10:30' },
              ],
            },
          ],
        },
        'exceptions.0.intervals.0',
      ],
    ];
    for (const [body, path] of cases) {
      const r = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.ownerToken, body });
      assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        (r.body.error.issues as { path: string }[]).some((i) => i.path === path),
        `${path} named in ${JSON.stringify(r.body.error.issues)}`,
      );
    }
    const unknownDay = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.ownerToken, body: { weekly: { someday: [] } } });
    assert.equal(unknownDay.status, 400);
    assert.deepEqual((await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey })).body, before);
  });

  test('agents read the hours but may not change them; another workspace’s inbox is not found', async () => {
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: agent.token })).status, 200);
    const refused = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: agent.token, body: { weekly: null } });
    assert.equal(refused.status, 403);
    const other = await seedWorkspace(s.app);
    assert.equal((await s.request('GET', `/v1/inboxes/${other.inboxId}/hours`, { token: seed.apiKey })).status, 404);
    assert.equal((await s.request('PUT', `/v1/inboxes/${other.inboxId}/hours`, { token: seed.ownerToken, body: { weekly: null } })).status, 404);
  });
});

describe('business hours in the widget', () => {
  test('the widget config says whether the inbox is open and when it opens next', async () => {
    const clock = new ManualClock(new Date('2026-11-07T10:00:00Z')); // Saturday 13:00 in Istanbul
    const s = await startTestServer({ clock });
    try {
      await s.app.jobs.stop();
      const seed = await seedWorkspace(s.app);
      await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.ownerToken, body: { timezone: 'Europe/Istanbul' } });
      const channel = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Chat', origins: ['https://shop.example'] });
      const config = () => s.request('GET', `/v1/widget/config?public_key=${channel.public_key}`, { headers: { origin: 'https://shop.example' } });
      assert.deepEqual((await config()).body.hours, { open_now: true, next_opening: null }, 'always open without a schedule');
      await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.ownerToken, body: { weekly: { mon: OFFICE } } });
      assert.deepEqual((await config()).body.hours, { open_now: false, next_opening: '2026-11-09T06:00:00.000Z' }, 'Monday 09:00 Istanbul');
      clock.set(new Date('2026-11-09T07:00:00Z'));
      assert.deepEqual((await config()).body.hours, { open_now: true, next_opening: null });
    } finally {
      await s.stop();
    }
  });
});
