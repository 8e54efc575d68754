// Help-desk migrations (Zendesk, Help Scout) against loopback fakes of their REST APIs: the
// read-only HTTP client (any method but GET refused before sending; Help Scout's token POST
// allowed to its token URL only), 429 with Retry-After and the per-minute limits (waited out and
// shown), credentials tested on PUT (auth and permission failures named), and each provider from
// draft to completed: dry run (counts, deleted tickets skipped), copy (conversations, statuses,
// labels from tags, notes, agents as members or by original name, attachments), sync of new
// tickets from the stored cursor, finish; the pull resumes from its cursor without duplicates.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import type { MigrationPart } from '../../src/mailbox-migration/background.js';
import { SourceError } from '../../src/mailbox-migration/sources/connect.js';
import { HelpScoutReader } from '../../src/mailbox-migration/sources/helpdesk/help-scout.js';
import { type HttpWait, ReadOnlyHttp } from '../../src/mailbox-migration/sources/helpdesk/http.js';
import { ReadOnlyViolation } from '../../src/mailbox-migration/sources/imap.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { FakeHelpScout, FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { daysAgo } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import { type ChildServer, spawnServer, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';

const SUPPORT = 'help@acme.test';

describe('help-desk migrations (Zendesk, Help Scout)', () => {
  let s: TestServer;
  let seed: Seed;
  let channelId: string;
  let bob: { personId: string; email: string };
  const zendesk = new FakeZendesk();
  const helpScout = new FakeHelpScout();
  const now = new Date();
  const clock = new ManualClock(now);
  const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

  before(async () => {
    await zendesk.start();
    await helpScout.start();
    s = await startTestServer({
      clock,
      env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url, SVC_MIGRATION_HELPSCOUT_URL: helpScout.url },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    channelId = (await seedEmailChannel(s.app, seed, { address: SUPPORT })).id;
    bob = await addPerson(s.app, seed.workspaceId, 'agent', 'bob@acme.test');
  });
  after(async () => {
    await s?.stop();
    await zendesk.stop();
    await helpScout.stop();
  });

  const api = (method: string, p: string, body?: unknown) => s.request(method, p, { token: seed.apiKey, body });
  const rc = () => ({ ctx: { lookup: s.app.lookup, config: s.app.config } });

  test('the HTTP client sends GET only: any other method is refused before it is sent; a POST goes only to the token URL', async () => {
    const before = zendesk.requests.length;
    const client = new ReadOnlyHttp({ ctx: rc().ctx, authorization: async () => 'Basic x' });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
      await assert.rejects(client.send(method, `${zendesk.url}/api/v2/tickets/1.json`, { bucket: { name: 't', perMinute: 100 } }), (e: unknown) => {
        assert.ok(e instanceof ReadOnlyViolation, method);
        assert.match((e as ReadOnlyViolation).command, new RegExp(`^${method} `));
        return true;
      });
    }
    assert.equal(zendesk.requests.length, before, 'nothing reached the server');
    assert.equal(client.requests, 0);
    // With a token URL: a POST there passes the guard, a POST anywhere else does not.
    const withToken = new ReadOnlyHttp({ ctx: rc().ctx, authorization: async () => 'Bearer x', tokenUrl: `${helpScout.url}/v2/oauth2/token` });
    const hsBefore = helpScout.requests.length;
    await assert.rejects(
      withToken.send('POST', `${helpScout.url}/v2/conversations`, { bucket: { name: 't', perMinute: 100 }, body: '{}' }),
      (e: unknown) => e instanceof ReadOnlyViolation,
    );
    await assert.rejects(
      withToken.send('POST', `${helpScout.url}/v2/oauth2/token?x=1`, { bucket: { name: 't', perMinute: 100 }, body: '' }),
      (e: unknown) => e instanceof ReadOnlyViolation,
    );
    assert.equal(helpScout.requests.length, hsBefore);
    const allowed = await withToken.send('POST', `${helpScout.url}/v2/oauth2/token`, {
      bucket: { name: 't', perMinute: 100 },
      body: 'grant_type=client_credentials',
      auth: false,
    });
    assert.equal(allowed.status, 401, 'the token POST was sent (and refused by the fake for lack of credentials)');
    assert.deepEqual(
      helpScout.requests.slice(hsBefore).map((r) => `${r.method} ${r.path}`),
      ['POST /v2/oauth2/token'],
    );
  });

  test('429 with Retry-After is waited out and reported; the per-minute limit makes the client wait', async () => {
    helpScout.conversations = [];
    const waits: HttpWait[] = [];
    const reader = new HelpScoutReader(rc(), { appId: helpScout.appId, appSecret: helpScout.appSecret }, (w) => {
      waits.push(w);
    });
    helpScout.throttleNext(1, '1', /^\/v2\/conversations$/);
    const started = Date.now();
    assert.equal(await reader.ticketCount(), 0);
    assert.ok(Date.now() - started >= 900, 'waited the second the provider asked for');
    assert.deepEqual(waits, [{ seconds: 1, reason: 'retry_after', bucket: 'help_scout' }]);
    // A Retry-After longer than the client waits inline: a provider limit (the migration pauses and retries later).
    helpScout.throttleNext(1, '3600', /^\/v2\/conversations$/);
    await assert.rejects(reader.ticketCount(), (e: unknown) => e instanceof SourceError && e.failure === 'provider_limit');
    // The sliding minute: with 2 a minute, the third request waits (the sleep is observed, not slept).
    const slept: number[] = [];
    const limited = new ReadOnlyHttp({
      ctx: rc().ctx,
      authorization: async () => 'Basic x',
      onWait: (w) => {
        waits.push(w);
      },
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    const bucket = { name: 'zendesk_export', perMinute: 2 };
    for (let i = 0; i < 3; i++) await (await limited.send('GET', `${zendesk.url}/api/v2/users/me.json`, { bucket })).text();
    assert.equal(slept.length, 1);
    assert.ok(slept[0] > 55_000 && slept[0] <= 60_000, String(slept[0]));
    assert.equal(waits.at(-1)?.reason, 'rate_limit');
  });

  test('Zendesk from draft to completed: credentials tested, dry run, copy, sync of new tickets, finish', async () => {
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

  test('Help Scout from draft to completed: token (renewed), pages, threads, notes, attachments, sync, finish', async () => {
    const t = (days: number) => iso(daysAgo(now, days));
    const ann: { id: number; type: 'customer'; email: string; first: string; last: string } = {
      id: 71,
      type: 'customer',
      email: 'ann@customer.test',
      first: 'Ann',
      last: 'Smith',
    };
    const bobUser = { id: 81, type: 'user' as const, email: 'bob@acme.test', first: 'Bob', last: 'Agent' };
    const dana = { id: 82, type: 'user' as const, email: 'dana@acme.test', first: 'Dana', last: 'Former' };
    helpScout.expiresIn = 1;
    helpScout.conversations = [
      {
        id: 501,
        number: 1,
        subject: 'Refund please',
        status: 'active',
        state: 'published',
        createdAt: t(4),
        userUpdatedAt: t(1),
        tags: ['refund'],
        primaryCustomer: ann,
        threads: [
          {
            id: 5011,
            type: 'customer',
            body: '<p>I want a refund.</p>',
            createdAt: t(4),
            createdBy: ann,
            attachments: [{ id: 77, filename: 'receipt.pdf', mimeType: 'application/pdf', bytes: Buffer.from('%PDF-1.4 receipt') }],
          },
          { id: 5012, type: 'lineitem', body: 'Assigned to Bob', createdAt: t(3), createdBy: bobUser },
          { id: 5013, type: 'note', body: '<p>Check the order first.</p>', createdAt: t(3), createdBy: dana },
          { id: 5014, type: 'message', body: '<p>Refund sent.</p>', createdAt: t(1), createdBy: bobUser },
        ],
      },
      {
        id: 502,
        number: 2,
        subject: 'Hello',
        status: 'closed',
        state: 'published',
        createdAt: t(40),
        userUpdatedAt: t(39),
        tags: [],
        primaryCustomer: ann,
        threads: [{ id: 5021, type: 'customer', body: 'Hi there', createdAt: t(40), createdBy: ann }],
      },
      {
        id: 503,
        number: 3,
        subject: 'Junk',
        status: 'spam',
        state: 'published',
        createdAt: t(5),
        userUpdatedAt: t(5),
        tags: [],
        primaryCustomer: ann,
        threads: [],
      },
      {
        id: 504,
        number: 4,
        subject: 'Gone',
        status: 'closed',
        state: 'deleted',
        createdAt: t(6),
        userUpdatedAt: t(6),
        tags: [],
        primaryCustomer: ann,
        threads: [],
      },
    ];
    const created = await api('POST', '/v1/migrations', { provider: 'help_scout', inbox_id: seed.inboxId, channel_id: channelId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    const wrong = await api('PUT', `/v1/migrations/${id}/credentials`, { app_id: helpScout.appId, app_secret: 'wrong-secret-value' });
    assert.equal(wrong.body.test.failed_step, 'login', JSON.stringify(wrong.body.test));
    const ok = await api('PUT', `/v1/migrations/${id}/credentials`, { app_id: helpScout.appId, app_secret: helpScout.appSecret });
    assert.equal(ok.body.test.ok, true, JSON.stringify(ok.body.test));
    assert.equal(ok.body.state, 'connected');
    assert.ok(!JSON.stringify(ok.body).includes(helpScout.appSecret));

    const tokensBefore = helpScout.tokens.length;
    await new Promise((r) => setTimeout(r, 1100)); // the token (1 s) expires: the next request gets a new one
    assert.equal((await api('POST', `/v1/migrations/${id}/scan`)).status, 202);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    assert.ok(helpScout.tokens.length > tokensBefore, 'a new token was asked for');
    const summary = ready.plan.summary;
    assert.equal(summary.total, 4, JSON.stringify(summary));
    assert.equal(summary.conversations, 2);
    assert.equal(summary.skipped.ticket_spam, 1);
    assert.equal(summary.skipped.ticket_deleted, 1);
    assert.deepEqual(summary.labels, ['refund']);
    assert.deepEqual(summary.tags, [{ tag: 'refund', messages: 3, conversations: 1 }]);

    helpScout.expiresIn = 7200;
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    const refund = await s.app.db
      .selectFrom('conversations')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'Refund please')
      .executeTakeFirstOrThrow();
    assert.equal(refund.imported, 1);
    const ann_ = await api('GET', '/v1/contacts?email=ann%40customer.test');
    assert.deepEqual(ann_.body.data[0]?.attributes, { help_scout_customer_id: '71' }, 'the Help Scout customer id is a contact attribute');
    assert.equal(refund.status, 'pending');
    const hello = await s.app.db
      .selectFrom('conversations')
      .select('status')
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'Hello')
      .executeTakeFirstOrThrow();
    assert.equal(hello.status, 'closed');
    const messages = await s.app.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', refund.id)
      .where('kind', 'in', ['message', 'note'])
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      messages.map((m) => [m.kind, m.direction, m.body?.trim()]),
      [
        ['message', 'in', 'I want a refund.'],
        ['note', 'out', 'Check the order first.'],
        ['message', 'out', 'Refund sent.'],
      ],
    );
    assert.equal(messages[2].author_person_id, bob.personId);
    const labels = await s.app.db.selectFrom('conversation_labels').select('label').where('conversation_id', '=', refund.id).execute();
    assert.deepEqual(
      labels.map((l) => l.label),
      ['refund'],
    );
    const files = await s.app.db.selectFrom('attachments').select(['filename', 'size']).where('message_id', '=', messages[0].id).execute();
    assert.deepEqual(files, [{ filename: 'receipt.pdf', size: 16 }]);

    // Sync: a reply in an existing conversation (modified since the cursor) joins its conversation.
    const c501 = helpScout.conversations[0];
    c501.threads.push({ id: 5015, type: 'customer', body: 'Thanks!', createdAt: iso(new Date(clock.now().getTime() + 60_000)), createdBy: ann });
    c501.userUpdatedAt = iso(new Date(Date.now() + 2000));
    const listRequests = helpScout.requests.filter((r) => r.path.startsWith('/v2/conversations?')).length;
    clock.advance(3 * 60_000);
    await s.app.jobs.drain();
    const later = helpScout.requests.filter((r) => r.path.startsWith('/v2/conversations?')).slice(listRequests);
    assert.ok(later.length >= 1 && later.every((r) => r.path.includes('modifiedSince=')), 'read from the stored modifiedSince');
    const thanks = await s.app.db.selectFrom('messages').select(['conversation_id', 'direction']).where('body', 'like', 'Thanks!%').execute();
    assert.deepEqual(thanks, [{ conversation_id: refund.id, direction: 'in' }]);
    const entries = await s.app.db.selectFrom('migration_helpdesk_entries').select('entry_key').where('migration_id', '=', id).execute();
    assert.equal(new Set(entries.map((e) => e.entry_key)).size, entries.length);
    assert.equal(entries.length, 5, 'the conversation read again added only its new thread');

    assert.equal((await api('POST', `/v1/migrations/${id}/finish`, { force: true })).status, 200);
    await expectState(s, seed.apiKey, id, 'completed');
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);
    assert.deepEqual(helpScout.writes(), [], 'only GET (and the token POST) reached Help Scout');
    assert.ok(!s.rawLogs.some((l) => l.includes(helpScout.appSecret)));
  });

  test('the export resumes from the stored cursor after a restart: a page read twice adds nothing', async () => {
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
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
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
