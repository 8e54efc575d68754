// Auto-assignment end to end over the ingress route: round robin goes strictly in turn among the
// available members (the away one gets nothing), least busy always picks a member with the fewest
// open conversations and never passes the capacity, and each conversation is assigned exactly once
// (one timeline line and one conversation.updated). The order is replayed from the event stream: an
// assignment's event is recorded while it holds the workspace's cursor lock, so event order is
// assignment order. On SQLite one server takes the mail concurrently; on Postgres two `svc serve`
// processes share one database and take 1,000 mails between them. Plus: a member online in the panel
// (a live realtime socket) is available without choosing, and a reopened unassigned conversation is
// assigned in the change that reopens it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createEmailChannel } from '../../src/channels/service.js';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import type { Db } from '../../src/db/schema.js';
import { createInbox } from '../../src/inboxes/service.js';
import { randomText } from '../../src/platform/ids.js';
import { createLogger } from '../../src/platform/log.js';
import { postgresUrl } from '../helpers/db.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, rawMail } from '../helpers/mail.js';
import { type ChildServer, spawnServer, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';

type Person = Awaited<ReturnType<typeof addPerson>>;

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Sends `n` new mails to `to`, spread over the servers, `perServer` at a time on each. */
async function deliverMany(servers: string[], to: string, n: number, perServer = 6): Promise<void> {
  let next = 0;
  const worker = async (base: string) => {
    while (next < n) {
      next++;
      const raw = rawMail({ To: to, From: `c${randomText(8)}@customer.example`, Subject: `Question ${randomText(6)}` });
      const res = await fetch(`${base}/v1/ingress/email?to=${encodeURIComponent(to)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INGRESS_SECRET}` },
        body: new Uint8Array(raw),
      });
      if (res.status !== 201) throw new Error(`ingress answered ${res.status}: ${await res.text()}`);
    }
  };
  await Promise.all(servers.flatMap((base) => Array.from({ length: perServer }, () => worker(base))));
}

/** conversation.updated events of an inbox, in the order they were recorded. */
async function assignmentsOf(db: Db, inboxId: string) {
  const rows = await db
    .selectFrom('events')
    .select(['seq', 'data'])
    .where('inbox_id', '=', inboxId)
    .where('type', '=', 'conversation.updated')
    .orderBy('seq')
    .execute();
  return rows.map((r) => JSON.parse(r.data).conversation as { id: string; assignee_id: string | null; team_id: string | null });
}

/** Every conversation of the inbox has exactly one auto-assignment line, and the event matches the row. */
async function assertAssignedOnce(db: Db, inboxId: string, expected: number) {
  const conversations = await db.selectFrom('conversations').select(['id', 'assignee_id', 'team_id']).where('inbox_id', '=', inboxId).execute();
  assert.equal(conversations.length, expected);
  const lines = await db
    .selectFrom('messages')
    .select(['conversation_id', 'details'])
    .where('kind', '=', 'event')
    .where(
      'conversation_id',
      'in',
      conversations.map((c) => c.id),
    )
    .execute();
  const perConversation = new Map<string, number>();
  for (const l of lines) {
    assert.equal(JSON.parse(l.details!).reason, 'auto_assignment');
    perConversation.set(l.conversation_id, (perConversation.get(l.conversation_id) ?? 0) + 1);
  }
  for (const c of conversations) assert.equal(perConversation.get(c.id), 1, `${c.id} has one auto-assignment line`);
  const events = await assignmentsOf(db, inboxId);
  assert.equal(events.length, expected, 'one conversation.updated per conversation');
  const byId = new Map(conversations.map((c) => [c.id, c]));
  for (const e of events) {
    assert.equal(byId.get(e.id)!.assignee_id, e.assignee_id);
    assert.equal(byId.get(e.id)!.team_id, e.team_id);
  }
  return events;
}

interface Scenario {
  servers: string[];
  app: App;
  seed: Seed;
  /** Round robin: conversations per available member; least busy: total mails. */
  rrEach: number;
  lbMails: number;
}

async function member(app: App, seed: Seed, servers: string[], availability: 'available' | 'away' | 'auto'): Promise<Person> {
  const p = await addPerson(app, seed.workspaceId, 'agent');
  if (availability !== 'auto') assert.equal((await call(servers[0], 'PUT', '/v1/me/availability', p.token, { availability })).status, 200);
  return p;
}

async function mailAddress(app: App, seed: Seed, inboxId: string) {
  return (
    await createEmailChannel(app, { workspaceId: seed.workspaceId, inboxId, name: 'Mail', address: `in-${randomText(8)}@example.com`, displayName: 'Acme' })
  ).address!;
}

async function roundRobin(sc: Scenario) {
  const { app, seed, servers } = sc;
  const inbox = await createInbox(app, { workspaceId: seed.workspaceId, name: `RR ${randomText(4)}` });
  const address = await mailAddress(app, seed, inbox.id);
  const available = [];
  for (let i = 0; i < 4; i++) available.push(await member(app, seed, servers, 'available'));
  const away = await member(app, seed, servers, 'away');
  const team = await call(servers[0], 'POST', '/v1/teams', seed.ownerToken, {
    name: `RR ${randomText(4)}`,
    member_ids: [...available, away].map((p) => p.personId),
    inbox_ids: [inbox.id],
    assignment: 'round_robin',
  });
  assert.equal(team.status, 201, JSON.stringify(team.body));
  const total = sc.rrEach * available.length;
  await deliverMany(servers, address, total);

  const events = await assertAssignedOnce(app.db, inbox.id, total);
  const order = available.map((p) => p.personId).sort();
  const start = order.indexOf(events[0].assignee_id!);
  assert.ok(start >= 0);
  events.forEach((e, i) => {
    assert.equal(e.team_id, team.body.id);
    assert.equal(e.assignee_id, order[(start + i) % order.length], `assignment ${i} goes to the next member in turn`);
  });
  const view = await call(servers[0], 'GET', `/v1/teams/${team.body.id}`, seed.ownerToken);
  const load = new Map(view.body.members.map((m: any) => [m.person_id, m.open_conversations]));
  for (const p of available) assert.equal(load.get(p.personId), sc.rrEach);
  assert.equal(load.get(away.personId), 0, 'the away member gets nothing');
}

async function leastBusy(sc: Scenario) {
  const { app, seed, servers } = sc;
  const capacity = Math.round(sc.lbMails * 0.275);
  const inbox = await createInbox(app, { workspaceId: seed.workspaceId, name: `LB ${randomText(4)}` });
  const address = await mailAddress(app, seed, inbox.id);
  const side = await createInbox(app, { workspaceId: seed.workspaceId, name: `Side ${randomText(4)}` });
  const sideAddress = await mailAddress(app, seed, side.id);
  const people: Person[] = [];
  for (let i = 0; i < 4; i++) people.push(await member(app, seed, servers, 'available'));
  // Loads from before: two members already hold open conversations of another inbox.
  const prior = [Math.round(capacity * 0.4), Math.round(capacity * 0.2), 0, 0];
  await deliverMany(servers.slice(0, 1), sideAddress, prior[0] + prior[1], 4);
  const sideIds = (await app.db.selectFrom('conversations').select('id').where('inbox_id', '=', side.id).orderBy('id').execute()).map((r) => r.id);
  for (const [k, p] of [people[0], people[1]].entries()) {
    const ids = sideIds.splice(0, prior[k]);
    for (let i = 0; i < ids.length; i += 100) {
      const r = await call(servers[0], 'POST', '/v1/conversations/bulk-update', seed.ownerToken, {
        conversation_ids: ids.slice(i, i + 100),
        changes: { assignee_id: p.personId },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  }
  const team = await call(servers[0], 'POST', '/v1/teams', seed.ownerToken, {
    name: `LB ${randomText(4)}`,
    member_ids: people.map((p) => p.personId),
    inbox_ids: [inbox.id],
    assignment: 'least_busy',
    capacity,
  });
  assert.equal(team.status, 201, JSON.stringify(team.body));
  await deliverMany(servers, address, sc.lbMails);

  const events = await assertAssignedOnce(app.db, inbox.id, sc.lbMails);
  const load = new Map(people.map((p, k) => [p.personId, prior[k]]));
  let unassigned = 0;
  for (const [i, e] of events.entries()) {
    assert.equal(e.team_id, team.body.id);
    const eligible = [...load.entries()].filter(([, n]) => n < capacity);
    if (e.assignee_id === null) {
      assert.deepEqual(eligible, [], `assignment ${i}: left unassigned only when everyone is at capacity`);
      unassigned++;
      continue;
    }
    const least = Math.min(...eligible.map(([, n]) => n));
    assert.equal(load.get(e.assignee_id), least, `assignment ${i} goes to a least busy member`);
    load.set(e.assignee_id, least + 1);
  }
  for (const n of load.values()) assert.ok(n <= capacity, 'no member over capacity');
  const roomBefore = prior.reduce((sum, n) => sum + (capacity - n), 0);
  assert.equal(unassigned, sc.lbMails - roomBefore);
  const counts = await app.db
    .selectFrom('conversations')
    .select(['assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', seed.workspaceId)
    .where('status', '=', 'open')
    .where(
      'assignee_id',
      'in',
      people.map((p) => p.personId),
    )
    .groupBy('assignee_id')
    .execute();
  for (const c of counts) assert.equal(Number(c.n), capacity, 'everyone filled up to the capacity and no further');
}

describe('auto-assignment in one server (concurrent mail)', () => {
  let s: TestServer;
  let seed: Seed;
  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('round robin: strictly in turn among available members, each conversation once', async () => {
    await roundRobin({ servers: [s.url], app: s.app, seed, rrEach: 15, lbMails: 0 });
  });

  test('least busy: always a least busy member, never over capacity', async () => {
    await leastBusy({ servers: [s.url], app: s.app, seed, rrEach: 0, lbMails: 80 });
  });

  test('online in the panel is available without choosing; away wins over online; a reopened unassigned conversation is assigned', async () => {
    // A workspace of its own: the members made above are available and reach every inbox.
    seed = await seedWorkspace(s.app);
    const inbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Online' });
    const address = await mailAddress(s.app, seed, inbox.id);
    const online = await addPerson(s.app, seed.workspaceId, 'agent');
    const offline = await addPerson(s.app, seed.workspaceId, 'agent');
    const agentLimited = await addPerson(s.app, seed.workspaceId, 'agent');
    await call(
      s.url,
      'PATCH',
      `/v1/members/${(await call(s.url, 'GET', '/v1/members?limit=200', seed.ownerToken)).body.data.find((m: any) => m.person_id === agentLimited.personId).id}`,
      seed.ownerToken,
      {
        inbox_ids: [seed.inboxId],
      },
    );
    await call(s.url, 'PUT', '/v1/me/availability', agentLimited.token, { availability: 'available' });
    const set = await call(s.url, 'PUT', `/v1/inboxes/${inbox.id}/assignment`, seed.ownerToken, { assignment: 'round_robin', capacity: null });
    assert.equal(set.status, 200);
    // Nobody of the inbox's members is online or available (the owner neither): unassigned.
    await deliverMany([s.url], address, 1);
    let [first] = await s.app.db.selectFrom('conversations').selectAll().where('inbox_id', '=', inbox.id).execute();
    assert.equal(first.assignee_id, null);
    assert.equal(first.team_id ?? null, null);

    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?workspace=${seed.workspaceId}`, {
      headers: { authorization: `Bearer ${online.token}` },
    });
    await new Promise((resolve, reject) => {
      ws.once('message', resolve);
      ws.once('error', reject);
    });
    try {
      await deliverMany([s.url], address, 3, 1);
      const rows = await s.app.db.selectFrom('conversations').select(['id', 'assignee_id']).where('inbox_id', '=', inbox.id).orderBy('id').execute();
      assert.deepEqual(
        rows.slice(1).map((r) => r.assignee_id),
        [online.personId, online.personId, online.personId],
        'only the online member (the limited agent does not reach the inbox, the offline one is not available)',
      );
      assert.ok(!rows.some((r) => r.assignee_id === offline.personId || r.assignee_id === agentLimited.personId));

      // Away wins over being online: a closed, unassigned conversation reopened stays unassigned.
      await call(s.url, 'PUT', '/v1/me/availability', online.token, { availability: 'away' });
      await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'closed' });
      await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'open' });
      [first] = await s.app.db.selectFrom('conversations').selectAll().where('id', '=', first.id).execute();
      assert.equal(first.assignee_id, null);

      await call(s.url, 'PUT', '/v1/me/availability', online.token, { availability: 'auto' });
      await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'closed' });
      const reopened = await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'open' });
      assert.equal(reopened.body.assignee_id, online.personId, 'reopened and assigned in one change');
      const lines = await s.app.db.selectFrom('messages').select('details').where('conversation_id', '=', first.id).where('kind', '=', 'event').execute();
      const reopenLines = lines
        .map((l) => JSON.parse(l.details!).changes)
        .filter((c) => c?.status?.to === 'open')
        .sort((a, b) => Object.keys(a).length - Object.keys(b).length);
      assert.deepEqual(reopenLines, [
        { status: { from: 'closed', to: 'open' } },
        { status: { from: 'closed', to: 'open' }, assignee_id: { from: null, to: online.personId } },
      ]);
      // Reopened by someone who unassigns in the same change: it stays unassigned.
      await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'closed', assignee_id: null });
      const explicit = await call(s.url, 'PATCH', `/v1/conversations/${first.id}`, seed.ownerToken, { status: 'open', assignee_id: null });
      assert.equal(explicit.body.assignee_id, null);
    } finally {
      ws.terminate();
    }
  });
});

describe('auto-assignment across two processes on one Postgres database (1,000 assignments)', {
  skip: postgresUrl ? false : 'two servers share one Postgres database (SVC_TEST_DATABASE_URL)',
}, () => {
  let te: TestEnv;
  let app: App;
  let seed: Seed;
  const children: ChildServer[] = [];
  before(async () => {
    te = await testEnv({ SVC_INGRESS_SECRET: INGRESS_SECRET });
    children.push(await spawnServer(te.env));
    children.push(await spawnServer(te.env));
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    seed = await seedWorkspace(app);
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
  });

  test('round robin over 600 and least busy over 400 new conversations, taken by both servers at once', async () => {
    const servers = children.map((c) => c.url);
    await roundRobin({ servers, app, seed, rrEach: 150, lbMails: 0 });
    await leastBusy({ servers, app, seed, rrEach: 0, lbMails: 400 });
  });
});
