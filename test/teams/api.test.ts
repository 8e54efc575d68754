// /v1/teams against the real server: CRUD, who may do what, every bad input named by its field with
// nothing changed, team_id on conversations (PATCH, bulk, the list's filter with `mine`), and that
// taking a member out of a team or deleting a team leaves conversations consistent (a timeline line
// and one conversation.updated each). Availability (/v1/me/availability) and the inbox setting too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Person = Awaited<ReturnType<typeof addPerson>>;

describe('teams API', () => {
  let s: TestServer;
  let seed: Seed;
  let admin: Person;
  let agent: Person;
  let agent2: Person;
  let address: string;
  let inboxB: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    admin = await addPerson(s.app, seed.workspaceId, 'admin');
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    agent2 = await addPerson(s.app, seed.workspaceId, 'agent');
    address = (await seedEmailChannel(s.app, seed)).address!;
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
  });
  after(() => s.stop());

  const newConversation = async () => (await deliverMail(s, address, { Subject: `Q ${Math.random()}` })).conversation_id;
  const timeline = async (id: string) =>
    (
      await s.app.db
        .selectFrom('messages')
        .select(['body', 'details'])
        .where('conversation_id', '=', id)
        .where('kind', '=', 'event')
        .orderBy('created_at')
        .execute()
    ).map((m) => ({ body: m.body, details: JSON.parse(m.details!) }));

  test('owners and admins make, change and delete teams; everyone reads them', async () => {
    const made = await s.request('POST', '/v1/teams', {
      token: admin.token,
      body: { name: '  Support ', member_ids: [agent.personId, agent.personId, agent2.personId], inbox_ids: [seed.inboxId] },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.id, /^team_/);
    assert.equal(made.body.name, 'Support');
    assert.deepEqual(made.body.member_ids, [agent.personId, agent2.personId].sort());
    assert.deepEqual(made.body.inbox_ids, [seed.inboxId]);
    assert.equal(made.body.assignment, 'off');
    assert.equal(made.body.capacity, null);
    assert.deepEqual(
      made.body.members.map((m: any) => [m.availability, m.online, m.available, m.open_conversations]),
      [
        ['auto', false, false, 0],
        ['auto', false, false, 0],
      ],
    );

    for (const token of [agent.token, seed.apiKey]) {
      const list = await s.request('GET', '/v1/teams', { token });
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.deepEqual(
        list.body.data.map((t: any) => t.name),
        ['Support'],
      );
      const one = await s.request('GET', `/v1/teams/${made.body.id}`, { token });
      assert.equal(one.status, 200);
      assert.equal(one.body.id, made.body.id);
    }
    // Agents may not manage teams; nothing changes.
    for (const [method, path, body] of [
      ['POST', '/v1/teams', { name: 'Mine' }],
      ['PATCH', `/v1/teams/${made.body.id}`, { name: 'Renamed' }],
      ['DELETE', `/v1/teams/${made.body.id}`, undefined],
    ] as const) {
      const r = await s.request(method, path, { token: agent.token, body });
      assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'forbidden');
    }
    assert.equal((await s.request('GET', `/v1/teams/${made.body.id}`, { token: agent.token })).body.name, 'Support');

    const renamed = await s.request('PATCH', `/v1/teams/${made.body.id}`, {
      token: seed.ownerToken,
      body: { name: 'Front line', assignment: 'round_robin', capacity: 5 },
    });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.name, 'Front line');
    assert.equal(renamed.body.assignment, 'round_robin');
    assert.equal(renamed.body.capacity, 5);
    assert.deepEqual(renamed.body.member_ids, made.body.member_ids);

    const other = await s.request('POST', '/v1/teams', { token: seed.apiKey, body: { name: 'Billing', inbox_ids: [inboxB] } });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    const gone = await s.request('DELETE', `/v1/teams/${other.body.id}`, { token: seed.ownerToken });
    assert.deepEqual(gone.body, { team_id: other.body.id, conversations_updated: 0 });
    assert.equal((await s.request('GET', `/v1/teams/${other.body.id}`, { token: seed.ownerToken })).status, 404);
    // Back to off for the rest of the file.
    await s.request('PATCH', `/v1/teams/${made.body.id}`, { token: seed.ownerToken, body: { assignment: 'off', capacity: null } });
  });

  test('bad input is a 400 naming each field (or 409 for a taken name) and changes nothing', async () => {
    const before = (await s.request('GET', '/v1/teams', { token: seed.ownerToken })).body.data;
    const cases: [unknown, number, string[]][] = [
      [{}, 400, ['name']],
      [{ name: '   ' }, 400, ['name']],
      [{ name: 'x'.repeat(101) }, 400, ['name']],
      [{ name: 'Bad\u0007' }, 400, ['name']],
      [{ name: 'Ok', member_ids: ['per_nobody'] }, 400, ['member_ids.0']],
      [{ name: 'Ok', inbox_ids: [seed.inboxId, 'inb_nowhere'] }, 400, ['inbox_ids.1']],
      [{ name: 'Ok', assignment: 'random' }, 400, []],
      [{ name: 'Ok', capacity: 0 }, 400, []],
      [{ name: 'Ok', capacity: 1.5 }, 400, []],
      [{ name: 'Ok', extra: 1 }, 400, []],
      [{ name: 'FRONT LINE' }, 409, []],
    ];
    for (const [body, status, paths] of cases) {
      const r = await s.request('POST', '/v1/teams', { token: seed.ownerToken, body });
      assert.equal(r.status, status, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
      if (status === 409) assert.equal(r.body.error.code, 'team_name_taken');
      else assert.equal(r.body.error.code, 'invalid_request');
      for (const p of paths)
        assert.ok(
          r.body.error.issues.some((i: any) => i.path === p),
          `${p} in ${JSON.stringify(r.body.error.issues)}`,
        );
    }
    const team = before[0];
    const patched = await s.request('PATCH', `/v1/teams/${team.id}`, { token: seed.ownerToken, body: { name: 'New name', member_ids: ['per_nobody'] } });
    assert.equal(patched.status, 400);
    assert.equal((await s.request('PATCH', '/v1/teams/team_missing', { token: seed.ownerToken, body: { name: 'X' } })).status, 404);
    assert.deepEqual((await s.request('GET', '/v1/teams', { token: seed.ownerToken })).body.data, before);
  });

  test('team_id on conversations: PATCH, bulk, the list filter (a team, none, mine) and bad ids', async () => {
    const team = (await s.request('GET', '/v1/teams', { token: seed.ownerToken })).body.data[0];
    const [c1, c2, c3] = [await newConversation(), await newConversation(), await newConversation()];
    // The inbox is served by the team: new conversations join it.
    const shown = await s.request('GET', `/v1/conversations/${c1}`, { token: agent.token });
    assert.equal(shown.body.team_id, team.id);
    const out = await s.request('POST', '/v1/conversations/bulk-update', {
      token: agent.token,
      body: { conversation_ids: [c2, c3], changes: { team_id: null } },
    });
    assert.equal(out.status, 200, JSON.stringify(out.body));
    assert.deepEqual(
      out.body.data.map((c: any) => c.team_id),
      [null, null],
    );
    const seq = await lastEventSeq(s);
    const back = await s.request('PATCH', `/v1/conversations/${c2}`, { token: agent.token, body: { team_id: team.id } });
    assert.equal(back.body.team_id, team.id);
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.conversation.team_id]),
      [['conversation.updated', team.id]],
    );
    assert.deepEqual((await timeline(c2)).at(-1)!.details.changes, { team_id: { from: null, to: team.id } });

    const bad = await s.request('PATCH', `/v1/conversations/${c3}`, { token: agent.token, body: { team_id: 'team_nowhere' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.issues[0].path, 'team_id');

    const ids = async (q: string, token = agent.token) =>
      (await s.request('GET', `/v1/conversations?${q}`, { token })).body.data.map((c: any) => c.id).filter((id: string) => [c1, c2, c3].includes(id));
    assert.deepEqual(await ids(`team_id=${team.id}`), [c2, c1]);
    assert.deepEqual(await ids('team_id=none'), [c3]);
    assert.deepEqual(await ids('team_id=mine'), [c2, c1]);
    assert.deepEqual(await ids('team_id=mine', admin.token), []);
  });

  test('taking a member out of a team unassigns them from its live conversations; deleting a team takes its conversations out of it', async () => {
    const team = (await s.request('GET', '/v1/teams', { token: seed.ownerToken })).body.data[0];
    const [live, closed, elsewhere] = [await newConversation(), await newConversation(), await newConversation()];
    await s.request('POST', '/v1/conversations/bulk-update', {
      token: agent.token,
      body: { conversation_ids: [live, closed], changes: { assignee_id: agent.personId } },
    });
    await s.request('PATCH', `/v1/conversations/${closed}`, { token: agent.token, body: { status: 'closed' } });
    await s.request('PATCH', `/v1/conversations/${elsewhere}`, { token: agent.token, body: { assignee_id: agent.personId, team_id: null } });

    const seq = await lastEventSeq(s);
    const patched = await s.request('PATCH', `/v1/teams/${team.id}`, { token: admin.token, body: { member_ids: [agent2.personId] } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.member_ids, [agent2.personId]);
    const get = async (id: string) => (await s.request('GET', `/v1/conversations/${id}`, { token: seed.ownerToken })).body;
    assert.deepEqual([(await get(live)).assignee_id, (await get(live)).team_id], [null, team.id]);
    assert.equal((await get(closed)).assignee_id, agent.personId, 'closed conversations keep their assignee');
    assert.equal((await get(elsewhere)).assignee_id, agent.personId, 'conversations outside the team are not touched');
    const line = (await timeline(live)).at(-1)!;
    assert.deepEqual(line.details, { changes: { assignee_id: { from: agent.personId, to: null } }, reason: 'team_member_removed' });
    assert.deepEqual(
      (await eventsAfter(s, seq)).map((e) => [e.type, e.data.conversation.id]),
      [['conversation.updated', live]],
    );

    const seq2 = await lastEventSeq(s);
    const deleted = await s.request('DELETE', `/v1/teams/${team.id}`, { token: admin.token });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const inTeam = await s.app.db.selectFrom('conversations').select('id').where('team_id', '=', team.id).execute();
    assert.deepEqual(inTeam, [], 'no conversation points at the deleted team');
    const updated = (await eventsAfter(s, seq2)).filter((e) => e.type === 'conversation.updated');
    assert.equal(updated.length, deleted.body.conversations_updated);
    assert.ok(updated.some((e) => e.data.conversation.id === live));
    assert.ok(!updated.some((e) => e.data.conversation.id === closed), 'closed conversations leave quietly');
    assert.equal((await get(closed)).team_id, null);
    assert.deepEqual((await timeline(live)).at(-1)!.details, { changes: { team_id: { from: team.id, to: null } }, reason: 'team_deleted' });
    assert.equal((await s.app.db.selectFrom('team_members').select('person_id').where('team_id', '=', team.id).execute()).length, 0);
  });

  test('a member removed from the workspace leaves its teams', async () => {
    const extra = await addPerson(s.app, seed.workspaceId, 'agent');
    const made = await s.request('POST', '/v1/teams', { token: seed.ownerToken, body: { name: 'Night shift', member_ids: [extra.personId, agent2.personId] } });
    const member = (await s.request('GET', '/v1/members?limit=200', { token: seed.ownerToken })).body.data.find((m: any) => m.person_id === extra.personId);
    assert.equal((await s.request('DELETE', `/v1/members/${member.id}`, { token: seed.ownerToken })).status, 200);
    const team = await s.request('GET', `/v1/teams/${made.body.id}`, { token: seed.ownerToken });
    assert.deepEqual(team.body.member_ids, [agent2.personId]);
  });

  test('availability: away, available and auto; keys have none', async () => {
    const mine = await s.request('GET', '/v1/me/availability', { token: agent.token });
    assert.deepEqual(mine.body, { person_id: agent.personId, availability: 'auto', online: false, available: false });
    const away = await s.request('PUT', '/v1/me/availability', { token: agent.token, body: { availability: 'away' } });
    assert.deepEqual([away.body.availability, away.body.available], ['away', false]);
    const on = await s.request('PUT', '/v1/me/availability', { token: agent.token, body: { availability: 'available' } });
    assert.deepEqual([on.body.availability, on.body.available], ['available', true]);
    assert.equal((await s.request('PUT', '/v1/me/availability', { token: agent.token, body: { availability: 'busy' } })).status, 400);
    assert.equal((await s.request('GET', '/v1/me/availability', { token: seed.apiKey })).status, 403);
    const auto = await s.request('PUT', '/v1/me/availability', { token: agent.token, body: { availability: 'auto' } });
    assert.deepEqual([auto.body.availability, auto.body.available], ['auto', false]);
  });

  test('the inbox setting: off by default, owners and admins set it, bad values refused', async () => {
    const r = await s.request('GET', `/v1/inboxes/${inboxB}/assignment`, { token: agent.token });
    assert.deepEqual(r.body, { inbox_id: inboxB, assignment: 'off', capacity: null, updated_at: null });
    assert.equal(
      (await s.request('PUT', `/v1/inboxes/${inboxB}/assignment`, { token: agent.token, body: { assignment: 'round_robin', capacity: null } })).status,
      403,
    );
    assert.equal(
      (await s.request('PUT', `/v1/inboxes/${inboxB}/assignment`, { token: admin.token, body: { assignment: 'round_robin', capacity: 0 } })).status,
      400,
    );
    const set = await s.request('PUT', `/v1/inboxes/${inboxB}/assignment`, { token: admin.token, body: { assignment: 'least_busy', capacity: 3 } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual([set.body.assignment, set.body.capacity], ['least_busy', 3]);
  });
});
