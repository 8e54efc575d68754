// Zendesk migrations against a loopback fake of its REST API, from draft to completed: credentials
// tested on PUT (auth and permission failures named), dry run (counts, deleted tickets skipped),
// copy (conversations, statuses, labels from tags, notes, agents as members or by original name,
// attachments), sync of new tickets from the stored cursor, finish; the pull resumes from its cursor
// without duplicates, after a restart and after kill -9 of the server. The scene is helpdesk-scene.ts
// (the HTTP client: helpdesk-http.test.ts; Help Scout: helpdesk-help-scout.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import type { MigrationPart } from '../../src/mailbox-migration/background.js';
import { createLogger } from '../../src/platform/log.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { daysAgo } from '../helpers/mailbox.js';
import { callerWith, expectState } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';
import { iso, SUPPORT, startHelpdeskScene, stopHelpdeskScene } from './helpdesk-scene.js';

describe('Zendesk migrations', () => {
  const scene = sceneOf(startHelpdeskScene, stopHelpdeskScene);

  test('Zendesk from draft to completed: credentials tested, dry run, copy, sync of new tickets, finish', async () => {
    const { s, seed, channelId, bob, zendesk, now, clock, api } = scene();
    zendesk.users = [
      { id: 1, name: 'Ada Lovelace', email: 'ada@customer.test', role: 'end-user' },
      { id: 2, name: 'Bob Agent', email: 'bob@acme.test', role: 'agent' },
      { id: 3, name: 'Carol Former', email: 'carol@acme.test', role: 'agent' },
      { id: 4, name: 'Admin', email: 'agent@acme.test', role: 'admin' },
      { id: 5, name: 'Grace Hopper', email: 'grace@customer.test', role: 'end-user' },
    ];
    const t = (days: number) => iso(daysAgo(now, days));
    zendesk.tickets = [
      {
        id: 101,
        subject: 'Printer on fire',
        status: 'open',
        tags: ['printer', 'urgent'],
        requester_id: 1,
        created_at: t(3),
        updated_at: t(1),
        comments: [
          {
            id: 1001,
            author_id: 1,
            public: true,
            body: 'It is on fire.',
            created_at: t(3),
            attachments: [{ id: 9001, file_name: 'fire.png', content_type: 'image/png', bytes: Buffer.from('PNGDATA') }],
          },
          { id: 1002, author_id: 2, public: true, body: 'Please unplug it.', created_at: t(2) },
          { id: 1003, author_id: 3, public: false, body: 'Internal: replace under warranty.', created_at: iso(daysAgo(now, 1, 12)) },
          { id: 1004, author_id: 1, public: true, body: 'Still smoking.', created_at: t(1) },
        ],
      },
      {
        id: 102,
        subject: 'Old invoice',
        status: 'solved',
        tags: ['billing'],
        requester_id: 5,
        created_at: t(60),
        updated_at: t(59),
        comments: [
          { id: 2001, author_id: 5, public: true, body: 'Invoice is wrong.', created_at: t(60) },
          { id: 2002, author_id: 3, public: true, body: 'Fixed, sorry.', created_at: t(59) },
        ],
      },
      { id: 103, subject: 'Spam ticket', status: 'deleted', tags: [], requester_id: 5, created_at: t(5), updated_at: t(4), comments: [] },
      {
        id: 104,
        subject: 'Cannot log in',
        status: 'pending',
        tags: [],
        requester_id: 5,
        created_at: t(2),
        updated_at: t(1),
        comments: [
          { id: 4001, author_id: 5, public: true, body: 'Login fails.', created_at: t(2) },
          { id: 4002, author_id: 2, public: true, body: 'Reset link sent.', created_at: t(1) },
        ],
      },
    ];
    // Grace is a contact already, with attributes of her own that the copy keeps.
    const grace = await api('POST', '/v1/contacts', { name: 'Grace H.', emails: ['grace@customer.test'], attributes: { plan: 'gold' } });
    assert.equal(grace.status, 201, JSON.stringify(grace.body));
    const created = await api('POST', '/v1/migrations', { provider: 'zendesk', inbox_id: seed.inboxId, channel_id: channelId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.ok(created.body.allowed_actions.includes('credentials'));

    // Bad input: nothing is stored.
    const missing = await api('PUT', `/v1/migrations/${id}/credentials`, { subdomain: 'acme', email: 'agent@acme.test' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /api_token/);
    assert.equal((await expectState(s, seed.apiKey, id, 'draft')).credentials.set, false);

    // A wrong token: the test says the sign-in failed.
    const wrong = await api('PUT', `/v1/migrations/${id}/credentials`, { subdomain: 'acme', email: 'agent@acme.test', api_token: 'nope-token-secret' });
    assert.equal(wrong.status, 200, JSON.stringify(wrong.body));
    assert.equal(wrong.body.test.ok, false);
    assert.equal(wrong.body.test.failed_step, 'login');
    assert.equal(wrong.body.state, 'draft');
    // An end user's token: the test names the missing permission.
    zendesk.email = 'ada@customer.test';
    const endUser = await api('PUT', `/v1/migrations/${id}/credentials`, { subdomain: 'acme', email: 'ada@customer.test', api_token: zendesk.token });
    assert.equal(endUser.body.test.failed_step, 'permission', JSON.stringify(endUser.body.test));
    zendesk.email = 'agent@acme.test';
    const ok = await api('PUT', `/v1/migrations/${id}/credentials`, {
      subdomain: 'https://acme.zendesk.com',
      email: 'agent@acme.test',
      api_token: zendesk.token,
    });
    assert.equal(ok.body.test.ok, true, JSON.stringify(ok.body.test));
    assert.equal(ok.body.state, 'connected');
    assert.deepEqual(
      ok.body.test.steps.map((x: { status: string }) => x.status),
      ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
    );
    assert.ok(!JSON.stringify(ok.body).includes(zendesk.token), 'the token is never shown');

    const folders = await api('GET', `/v1/migrations/${id}/folders`);
    assert.equal(folders.status, 200);
    assert.deepEqual(
      folders.body.data.map((f: { path: string; tickets: number }) => [f.path, f.tickets]),
      [['Tickets', 3]],
    );

    // Dry run: the export is read page by page (with one 429 on the way), then scanned.
    zendesk.throttleNext(1, '1', /incremental/);
    assert.equal((await api('POST', `/v1/migrations/${id}/scan`)).status, 202);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    const summary = ready.plan.summary;
    assert.equal(summary.total, 8, JSON.stringify(summary));
    assert.equal(summary.to_copy, 8);
    assert.equal(summary.conversations, 3);
    assert.equal(summary.skipped.ticket_deleted, 1);
    assert.match(summary.skip_reasons.ticket_deleted, /deleted/);
    // The tickets' tags are the labels the copy gives, counted like folder labels.
    assert.deepEqual(summary.labels, ['billing', 'printer', 'urgent']);
    assert.deepEqual(summary.tags, [
      { tag: 'billing', messages: 2, conversations: 1 },
      { tag: 'printer', messages: 4, conversations: 1 },
      { tag: 'urgent', messages: 4, conversations: 1 },
    ]);
    const activity = await api('GET', `/v1/migrations/${id}/activity?limit=200`);
    const wait = activity.body.data.find((a: { action: string }) => a.action === 'provider_wait');
    assert.deepEqual(wait?.detail, { seconds: 1, reason: 'retry_after', limit: 'zendesk_export' });

    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');

    const conversations = await s.app.db
      .selectFrom('conversations')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('imported', '=', 1)
      .orderBy('created_at')
      .execute();
    const bySubject = new Map(conversations.map((c) => [c.subject, c]));
    assert.deepEqual([...bySubject.keys()].sort(), ['Cannot log in', 'Old invoice', 'Printer on fire']);
    assert.equal(bySubject.get('Printer on fire')!.status, 'open', 'the customer wrote last, recently');
    assert.equal(bySubject.get('Old invoice')!.status, 'closed', 'older than the close-after days');
    assert.equal(bySubject.get('Cannot log in')!.status, 'pending', 'the team wrote last');
    assert.equal(new Date(bySubject.get('Printer on fire')!.created_at).getTime(), new Date(t(3)).getTime(), 'original times');
    const labels = await s.app.db
      .selectFrom('conversation_labels')
      .select('label')
      .where('conversation_id', '=', bySubject.get('Printer on fire')!.id)
      .execute();
    assert.deepEqual(labels.map((l) => l.label).sort(), ['printer', 'urgent']);

    const messages = await s.app.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', bySubject.get('Printer on fire')!.id)
      .where('kind', 'in', ['message', 'note'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      messages.map((m) => [m.kind, m.direction, m.body?.trim().split('\n')[0]]),
      [
        ['message', 'in', 'It is on fire.'],
        ['message', 'out', 'Please unplug it.'],
        ['note', 'out', 'Internal: replace under warranty.'],
        ['message', 'in', 'Still smoking.'],
      ],
    );
    assert.equal(messages[1].author_person_id, bob.personId, 'an agent who is a member writes as the member');
    assert.equal(messages[2].author_person_id, null, 'an agent who is no member keeps the original name and address');
    assert.match(messages[2].details ?? '', /carol@acme\.test/);
    const files = await s.app.db.selectFrom('attachments').select(['filename', 'size']).where('message_id', '=', messages[0].id).execute();
    assert.deepEqual(files, [{ filename: 'fire.png', size: 7 }]);
    const contact = await s.app.db
      .selectFrom('contact_emails')
      .select('email')
      .where('workspace_id', '=', seed.workspaceId)
      .where('email', '=', 'ada@customer.test')
      .execute();
    assert.equal(contact.length, 1);
    // The requester's Zendesk user id is kept as an attribute (external ids are the customer backend's).
    const attributesOf = async (email: string) => {
      const found = await api('GET', `/v1/contacts?email=${encodeURIComponent(email)}`);
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.data.length, 1);
      return { attributes: found.body.data[0].attributes, external_ids: found.body.data[0].external_ids };
    };
    assert.deepEqual(await attributesOf('ada@customer.test'), { attributes: { zendesk_user_id: '1' }, external_ids: [] });
    assert.deepEqual(await attributesOf('grace@customer.test'), { attributes: { plan: 'gold', zendesk_user_id: '5' }, external_ids: [] });

    // Sync: a ticket made after the copy ended is read from the stored cursor and arrives as new mail.
    zendesk.tickets.push({
      id: 105,
      subject: 'New after switch',
      status: 'new',
      tags: [],
      requester_id: 1,
      created_at: iso(new Date(Date.now() + 1000)),
      updated_at: iso(new Date(Date.now() + 1000)),
      comments: [{ id: 5001, author_id: 1, public: true, body: 'Hello again.', created_at: iso(new Date(clock.now().getTime() + 60_000)) }],
    });
    const exportRequests = zendesk.requests.filter((r) => r.path.includes('incremental')).length;
    clock.advance(3 * 60_000);
    await s.app.jobs.drain();
    const newOnes = await s.app.db
      .selectFrom('conversations')
      .select(['subject', 'imported'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'New after switch')
      .execute();
    assert.deepEqual(newOnes, [{ subject: 'New after switch', imported: 0 }]);
    const resumed = zendesk.requests.filter((r) => r.path.includes('incremental')).slice(exportRequests);
    assert.ok(resumed.length >= 1 && resumed.every((r) => r.path.includes('cursor=')), 'the sync reads on from the stored cursor');

    const finished = await api('POST', `/v1/migrations/${id}/finish`, { force: true });
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    await expectState(s, seed.apiKey, id, 'completed');
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null, 'the API token is deleted at the end');
    const left = await s.app.db.selectFrom('migration_helpdesk_entries').select('uid').where('migration_id', '=', id).execute();
    assert.equal(left.length, 0, 'what was read from Zendesk goes with the token');
    assert.deepEqual(zendesk.writes(), [], 'nothing but GET reached Zendesk');
    assert.ok(!s.rawLogs.some((l) => l.includes(zendesk.token)), 'the token never reaches the log');
  });

  test('the export resumes from the stored cursor after a restart: a page read twice adds nothing', async () => {
    const { s, seed, channelId, zendesk, now, clock, api } = scene();
    zendesk.tickets = Array.from({ length: 5 }, (_, i) => ({
      id: 700 + i,
      subject: `Bulk ${i}`,
      status: 'open' as const,
      tags: [],
      requester_id: 5,
      created_at: iso(daysAgo(now, 10 - i)),
      updated_at: iso(daysAgo(now, 10 - i)),
      comments: [{ id: 7000 + i, author_id: 5, public: true, body: `Question ${i}`, created_at: iso(daysAgo(now, 10 - i)) }],
    }));
    const created = await api('POST', '/v1/migrations', { provider: 'zendesk', inbox_id: seed.inboxId, channel_id: channelId });
    const id = created.body.id as string;
    clock.advance(11 * 60_000); // past the window of connection tests
    const ok = await api('PUT', `/v1/migrations/${id}/credentials`, { subdomain: 'acme2', email: 'agent@acme.test', api_token: zendesk.token });
    assert.equal(ok.body.test.ok, true, JSON.stringify(ok.body.test));
    await api('POST', `/v1/migrations/${id}/scan`);
    // One page per run, and the run is cut after the first page (as by a crash after its commit).
    const worker = (s.server.parts['mailbox-migration'] as MigrationPart).worker;
    worker.limits.budgetMs = 0;
    await worker.runOnce(id);
    const cursor1 = await s.app.db.selectFrom('migration_helpdesk_sources').selectAll().where('migration_id', '=', id).executeTakeFirstOrThrow();
    assert.ok(cursor1.cursor);
    assert.equal(cursor1.pull_done, 0);
    // A crash before the cursor was stored: the same page is read again from the older cursor.
    await s.app.db.updateTable('migration_helpdesk_sources').set({ cursor: null }).where('migration_id', '=', id).execute();
    const pages = zendesk.requests.filter((r) => r.path.includes('incremental')).length;
    await s.app.jobs.drain();
    worker.limits.budgetMs = 10_000;
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    assert.equal(ready.plan.summary.total, 5);
    const entries = await s.app.db
      .selectFrom('migration_helpdesk_entries')
      .select(['uid', 'entry_key'])
      .where('migration_id', '=', id)
      .orderBy('uid')
      .execute();
    assert.deepEqual(
      entries.map((e) => e.entry_key),
      [0, 1, 2, 3, 4].map((i) => `zendesk:${700 + i}:${7000 + i}`),
    );
    assert.deepEqual(
      entries.map((e) => Number(e.uid)),
      [1, 2, 3, 4, 5],
    );
    assert.ok(zendesk.requests.filter((r) => r.path.includes('incremental')).length - pages >= 3);
    await api('DELETE', `/v1/migrations/${id}`);
    assert.equal((await s.app.db.selectFrom('migration_helpdesk_entries').select('uid').where('migration_id', '=', id).execute()).length, 0);
  });
});

describe('kill -9 of the server while it reads a help desk', () => {
  const zendesk = new FakeZendesk();
  let te: TestEnv;
  let app: App | undefined;
  const children: ChildServer[] = [];

  before(async () => {
    await zendesk.start();
    te = await testEnv({ SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url });
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
    await zendesk.stop();
  });

  test('the export and the copy go on from the stored cursor: every comment exactly once', async () => {
    const TICKETS = 30;
    const now = Date.now();
    zendesk.users = [
      { id: 1, name: 'Customer', email: 'c@customer.test', role: 'end-user' },
      { id: 4, name: 'Admin', email: zendesk.email, role: 'admin' },
    ];
    zendesk.tickets = Array.from({ length: TICKETS }, (_, i) => {
      const at = (h: number) => new Date(now - (TICKETS - i) * 86_400_000 + h * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      return {
        id: 900 + i,
        subject: `Ticket ${i}`,
        status: 'open' as const,
        tags: ['bulk'],
        requester_id: 1,
        created_at: at(0),
        updated_at: at(2),
        comments: [
          { id: 90_000 + i * 10, author_id: 1, public: true, body: `Question ${i}`, created_at: at(0) },
          { id: 90_001 + i * 10, author_id: 4, public: true, body: `Answer ${i}`, created_at: at(1) },
        ],
      };
    });
    zendesk.pageSize = 2;
    zendesk.delayMs = 40;
    const first = await spawnServer(te.env);
    children.push(first);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    await seedEmailChannel(app, seed, { address: SUPPORT });
    const call = callerWith(seed.apiKey);
    const created = await call(first.url, 'POST', '/v1/migrations', { provider: 'zendesk', inbox_id: seed.inboxId });
    const id = created.body.id as string;
    const connected = await call(first.url, 'PUT', `/v1/migrations/${id}/credentials`, { subdomain: 'acme', email: zendesk.email, api_token: zendesk.token });
    assert.equal(connected.body.test.ok, true, JSON.stringify(connected.body));
    await call(first.url, 'POST', `/v1/migrations/${id}/scan`);
    const entries = async () =>
      Number(
        (
          await app!.db
            .selectFrom('migration_helpdesk_entries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('migration_id', '=', id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await waitUntil(async () => (await entries()) >= 4, 60_000, 5);
    assert.equal(await first.kill('SIGKILL'), null);
    const atKill = await entries();
    assert.ok(atKill < TICKETS * 2, `killed while reading (${atKill} of ${TICKETS * 2})`);

    zendesk.delayMs = 0;
    const second = await spawnServer(te.env);
    children.push(second);
    await waitUntil(async () => (await call(second.url, 'GET', `/v1/migrations/${id}`)).body.state === 'ready', 120_000);
    const keys = await app.db.selectFrom('migration_helpdesk_entries').select('entry_key').where('migration_id', '=', id).execute();
    assert.equal(keys.length, TICKETS * 2);
    assert.equal(new Set(keys.map((k) => k.entry_key)).size, TICKETS * 2, 'no entry read twice');
    await call(second.url, 'POST', `/v1/migrations/${id}/start`);
    await waitUntil(async () => (await call(second.url, 'GET', `/v1/migrations/${id}`)).body.state === 'syncing', 120_000);
    const messages = await app.db
      .selectFrom('messages')
      .innerJoin('conversations', 'conversations.id', 'messages.conversation_id')
      .select('messages.body')
      .where('conversations.workspace_id', '=', seed.workspaceId)
      .where('messages.kind', '=', 'message')
      .execute();
    assert.equal(messages.length, TICKETS * 2, 'every comment copied once');
    assert.deepEqual(zendesk.writes(), []);
    await second.kill('SIGTERM');
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
