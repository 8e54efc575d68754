// Reports and usage on a small hand-checked dataset: conversations opened and closed, replies, first
// response and resolution medians and p90, ratings, per UTC day; imported mail left out of the
// report and counted apart in usage.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findOrCreateContactByEmail } from '../../src/contacts/identify.js';
import { startConversation } from '../../src/conversations/service.js';
import { HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { deleteWorkspaceReportTotals, durationFigures } from '../../src/reports/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'reports-secret';

describe('reports and usage', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  let agent: { personId: string; token: string };
  const clock = new ManualClock(new Date('2026-11-02T08:00:00Z'));

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SINK_LOGIN.password });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET }, clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey, body: { enabled: true } });
    // A greeting must not count as a reply or a first response.
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: true } });
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const as = (token: string) => ({ token, headers: { 'svc-workspace': seed.workspaceId } });
  async function mail(from: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, From: from }), token: SECRET });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }
  const reply = (id: string, token: string) => s.request('POST', `/v1/conversations/${id}/messages`, { ...as(token), body: { body: 'Answer' } });
  const close = (id: string, token: string) => s.request('PATCH', `/v1/conversations/${id}`, { ...as(token), body: { status: 'closed' } });

  test('the median is the mean of the middle two; p90 is the nearest rank', () => {
    assert.deepEqual(durationFigures([]), { count: 0, median_seconds: null, p90_seconds: null });
    assert.deepEqual(durationFigures([60]), { count: 1, median_seconds: 60, p90_seconds: 60 });
    assert.deepEqual(durationFigures([60, 120, 600]), { count: 3, median_seconds: 120, p90_seconds: 600 });
    assert.deepEqual(durationFigures([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]), { count: 10, median_seconds: 55, p90_seconds: 90 });
  });

  test('medians and p90s computed by the database equal durationFigures over the same rows, every day and the period', async () => {
    // A workspace of its own: 45 days in which day i has i first responses and i + (i % 3) resolutions
    // (counts 1…~60: every remainder of ten, so both ways the nearest rank is picked on SQLite), values
    // with repeats, business_seconds null on some rows (then calendar time), two members.
    const ws = await seedWorkspace(s.app);
    let seedValue = 42;
    const random = (n: number) => {
      seedValue = (seedValue * 1103515245 + 12345) % 2147483648;
      return seedValue % n;
    };
    const members = [ws.ownerId, ''];
    const rows: {
      workspace_id: string;
      day: string;
      inbox_id: string;
      member_id: string;
      kind: 'first_response' | 'resolution';
      conversation_id: string;
      seconds: number;
      business_seconds: number | null;
    }[] = [];
    const days = Array.from({ length: 45 }, (_, i) => new Date(Date.UTC(2026, 5, 1 + i)).toISOString().slice(0, 10));
    days.forEach((day, i) => {
      for (const kind of ['first_response', 'resolution'] as const) {
        const count = kind === 'first_response' ? i + 1 : i + 1 + ((i + 1) % 3);
        for (let j = 0; j < count; j++) {
          const seconds = random(5) === 0 ? 600 : random(200_000);
          rows.push({
            workspace_id: ws.workspaceId,
            day,
            inbox_id: ws.inboxId,
            member_id: members[random(2)],
            kind,
            conversation_id: `cnv_fixture_${rows.length}`,
            seconds,
            business_seconds: random(4) === 0 ? null : Math.floor(seconds / (1 + random(3))),
          });
        }
      }
    });
    for (let i = 0; i < rows.length; i += 200)
      await s.app.db
        .insertInto('report_durations')
        .values(rows.slice(i, i + 200))
        .execute();
    const expected = (selected: typeof rows) => {
      const sorted = (values: number[]) => values.sort((a, b) => a - b);
      const of = (kind: 'first_response' | 'resolution') => selected.filter((r) => r.kind === kind);
      return {
        first_response: durationFigures(sorted(of('first_response').map((r) => r.seconds))),
        resolution: durationFigures(sorted(of('resolution').map((r) => r.seconds))),
        first_response_business: durationFigures(sorted(of('first_response').map((r) => r.business_seconds ?? r.seconds))),
        resolution_business: durationFigures(sorted(of('resolution').map((r) => r.business_seconds ?? r.seconds))),
      };
    };
    const pick = (f: Record<string, unknown>) => ({
      first_response: f.first_response,
      resolution: f.resolution,
      first_response_business: f.first_response_business,
      resolution_business: f.resolution_business,
    });
    // The 45 days (1,035 first responses), its first four days (10: a multiple of ten), and 200 days
    // from the first (a long period: read by rank from the kind indexes on SQLite, LONG_PERIOD_DAYS).
    const longTo = new Date(Date.UTC(2026, 5, 200)).toISOString().slice(0, 10);
    const compare = async (when: string) => {
      for (const [member, to] of [
        [undefined, days[days.length - 1]],
        [ws.ownerId, days[days.length - 1]],
        [undefined, days[3]],
        [undefined, longTo],
        [ws.ownerId, longTo],
      ] as const) {
        const selected = rows.filter((r) => (member === undefined || r.member_id === member) && r.day <= to);
        const r = await s.request('GET', `/v1/reports?from=${days[0]}&to=${to}${member ? `&member_id=${member}` : ''}`, { token: ws.apiKey });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual(pick(r.body.totals), expected(selected), `${when}: the period (member ${member ?? 'any'})`);
        for (const day of r.body.days) assert.deepEqual(pick(day), expected(selected.filter((x) => x.day === day.day)), `${when}: ${day.day}`);
      }
    };
    const kept = async () =>
      Number(
        (
          await s.app.db
            .selectFrom('report_day_figures')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', ws.workspaceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await compare('computed');
    // Days before yesterday (the clock's 2026-11-01), June 1 to October 31, are kept for two scopes
    // (anyone and the owner) and read back; later days of the long period are always computed.
    assert.equal(await kept(), 153 * 2);
    await compare('read back');
    // A day's rows change (one added, one removed): its kept figures go, and the answers follow.
    const added = { ...rows[0], day: days[5], conversation_id: 'cnv_fixture_added', seconds: 1, business_seconds: 1 };
    rows.push(added);
    await s.app.db.insertInto('report_durations').values(added).execute();
    const removed = rows.findIndex((r) => r.day === days[7]);
    await s.app.db.deleteFrom('report_durations').where('conversation_id', '=', rows[removed].conversation_id).execute();
    rows.splice(removed, 1);
    await compare('after a change');
    // So do its totals'.
    const totals = async () => (await s.request('GET', `/v1/reports?from=${days[0]}&to=${longTo}`, { token: ws.apiKey })).body;
    assert.equal((await totals()).totals.replies, 0);
    await s.app.db.insertInto('report_days').values({ workspace_id: ws.workspaceId, day: days[5], inbox_id: ws.inboxId, member_id: '', replies: 3 }).execute();
    const after = await totals();
    assert.equal(after.totals.replies, 3);
    assert.equal(after.days.find((d: { day: string }) => d.day === days[5]).replies, 3);
    // The workspace's deletion step removes them.
    while ((await deleteWorkspaceReportTotals(s.app, ws.workspaceId, 500)) > 0);
    assert.equal(await kept(), 0);
  });

  test('a hand-checked day and the next', async () => {
    // Day 1 (2026-11-02): A, B, C opened at 08:00.
    const a = await mail('a@cust.example');
    const b = await mail('b@cust.example');
    const c = await mail('c@cust.example');
    clock.advance(1 * MINUTE); // 08:01: the owner answers A (first response 60 s)
    await reply(a, seed.ownerToken);
    clock.advance(1 * MINUTE); // 08:02: the agent answers B (120 s), then again (a reply, not a first response)
    await reply(b, agent.token);
    await reply(b, agent.token);
    await s.request('POST', `/v1/conversations/${b}/messages`, { ...as(agent.token), body: { kind: 'note', body: 'a note is no reply' } });
    clock.advance(8 * MINUTE); // 08:10: the owner answers C (600 s) and closes A (resolution 600 s)
    await reply(c, seed.ownerToken);
    await close(a, seed.ownerToken);
    clock.advance(50 * MINUTE); // 09:00: the agent closes B (3600 s)
    await close(b, agent.token);
    // The customer of A rates 5, of B rates 2 (B is unassigned: rating goes to no member).
    await s.request('PATCH', `/v1/conversations/${a}`, { ...as(seed.ownerToken), body: { assignee_id: seed.ownerId } });
    await s.app.jobs.drain();
    for (const [id, score] of [
      [a, '5'],
      [b, '2'],
    ] as const) {
      const request = await s.app.db.selectFrom('rating_requests').select('id').where('conversation_id', '=', id).executeTakeFirstOrThrow();
      const { ratingToken } = await import('../../src/ratings/service.js');
      const token = await ratingToken(s.app, request.id);
      const r = await s.request('POST', `/v1/ratings/${token}`, { raw: `score=${score}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(r.status, 200);
    }
    // Day 2 (2026-11-03 09:00): C is closed by the owner (resolution 25 h), D opened.
    clock.advance(24 * HOUR);
    await close(c, seed.ownerToken);
    await mail('d@cust.example');

    // Imported history on day 2: a quiet conversation with a team reply and a close, never counted.
    await s.app.db.transaction().execute(async (trx) => {
      const tx = { db: trx, clock };
      const { view } = await findOrCreateContactByEmail(tx, { workspaceId: seed.workspaceId, email: 'old@cust.example', quiet: true });
      const when = new Date('2026-11-03T07:00:00Z');
      await startConversation(tx, {
        conversation: {
          workspaceId: seed.workspaceId,
          inboxId: seed.inboxId,
          contactId: view.contact.id,
          source: 'email',
          imported: true,
          status: 'closed',
          createdAt: when,
        },
        contact: view,
        message: {
          kind: 'message',
          direction: 'in',
          author: { type: 'contact', contactId: view.contact.id },
          body: 'old',
          createdAt: when,
          importedAt: clock.now(),
        },
        quiet: true,
      });
    });

    const r = await s.request('GET', '/v1/reports?from=2026-11-02&to=2026-11-03', { token: seed.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [d1, d2] = r.body.days;
    assert.equal(d1.day, '2026-11-02');
    assert.equal(d1.opened, 3);
    assert.equal(d1.replies, 4);
    assert.equal(d1.closed, 2);
    assert.deepEqual(d1.first_response, { count: 3, median_seconds: 120, p90_seconds: 600 });
    assert.deepEqual(d1.resolution, { count: 2, median_seconds: 2100, p90_seconds: 3600 });
    assert.deepEqual(d1.ratings, { count: 2, average: 3.5, distribution: { '1': 0, '2': 1, '3': 0, '4': 0, '5': 1 } });
    assert.equal(d2.day, '2026-11-03');
    assert.equal(d2.opened, 1);
    assert.equal(d2.closed, 1);
    assert.equal(d2.replies, 0);
    assert.deepEqual(d2.resolution, { count: 1, median_seconds: 25 * 3600, p90_seconds: 25 * 3600 });
    assert.equal(r.body.totals.opened, 4);
    assert.deepEqual(r.body.totals.resolution, { count: 3, median_seconds: 3600, p90_seconds: 25 * 3600 });

    // One member: the agent replied twice and closed B; conversations opened belong to nobody.
    const mine = await s.request('GET', `/v1/reports?from=2026-11-02&to=2026-11-03&member_id=${agent.personId}`, { token: seed.apiKey });
    assert.equal(mine.body.totals.opened, null);
    assert.equal(mine.body.totals.replies, 2);
    assert.equal(mine.body.totals.closed, 1);
    assert.deepEqual(mine.body.totals.first_response, { count: 1, median_seconds: 120, p90_seconds: 120 });
    assert.equal(mine.body.totals.ratings.count, 0);
    const owner = await s.request('GET', `/v1/reports?from=2026-11-02&to=2026-11-03&member_id=${seed.ownerId}`, { token: seed.apiKey });
    assert.deepEqual(owner.body.totals.ratings.distribution, { '1': 0, '2': 0, '3': 0, '4': 0, '5': 1 });
  });

  test('bad periods are refused; another inbox or an agent limited elsewhere sees none of it', async () => {
    for (const q of ['from=2026-13-01', 'from=2026-11-05&to=2026-11-01', 'from=2025-01-01&to=2026-11-03', 'to=yesterday']) {
      const r = await s.request('GET', `/v1/reports?${q}`, { token: seed.apiKey });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const other = await s.request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: 'Elsewhere' } });
    const r = await s.request('GET', `/v1/reports?from=2026-11-02&to=2026-11-03&inbox_id=${other.body.id}`, { token: seed.apiKey });
    assert.equal(r.body.totals.opened, 0);
    const limited = await addPerson(s.app, seed.workspaceId, 'agent');
    const membership = await s.app.db.selectFrom('memberships').select('id').where('person_id', '=', limited.personId).executeTakeFirstOrThrow();
    const limit = await s.request('PATCH', `/v1/members/${membership.id}`, { token: seed.ownerToken, body: { inbox_ids: [other.body.id] } });
    assert.equal(limit.status, 200, JSON.stringify(limit.body));
    const seen = await s.request('GET', '/v1/reports?from=2026-11-02&to=2026-11-03', as(limited.token));
    assert.equal(seen.status, 200);
    assert.equal(seen.body.totals.opened, 0);
    assert.equal((await s.request('GET', `/v1/reports?inbox_id=${seed.inboxId}`, as(limited.token))).status, 404);
  });

  test('usage counts live and imported conversations and messages apart, by month', async () => {
    await s.app.jobs.drain(); // the greetings' jobs
    const r = await s.request('GET', '/v1/usage?from=2026-10&to=2026-11', { token: seed.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [oct, nov] = r.body.months;
    assert.deepEqual(oct.conversations, { billed: 0, imported: 0 });
    assert.equal(nov.month, '2026-11');
    // Live: A, B, C, D (two of them greeted: the 24-hour rule is per contact, each contact is new).
    assert.deepEqual(nov.conversations, { billed: 4, imported: 1 });
    assert.equal(nov.messages.imported, 1);
    // 4 customer mails + 4 greetings + 4 replies + 1 note.
    assert.equal(nov.messages.billed, 13);
    assert.ok(r.body.storage_bytes > 0, 'the original e-mails are stored');
    assert.equal((await s.request('GET', '/v1/usage', as(agent.token))).status, 403);
    assert.equal((await s.request('GET', '/v1/usage?from=2026-1', { token: seed.apiKey })).status, 400);
    // By default no month from before the workspace existed (it was made in November 2026).
    const recent = await s.request('GET', '/v1/usage', { token: seed.apiKey });
    assert.deepEqual(
      recent.body.months.map((m: { month: string }) => m.month),
      ['2026-11'],
    );
    // Asked for, earlier months are still given.
    assert.equal((await s.request('GET', '/v1/usage?from=2026-09', { token: seed.apiKey })).body.months.length, 3);
  });
});
