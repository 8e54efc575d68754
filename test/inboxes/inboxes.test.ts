// Inboxes after creation: PATCH (validation, slug per workspace, null clears, inbox.updated) and
// DELETE (stops at once: SMTP 550, chat key and visitor sessions refused; webhook endpoints, API
// key limits, migrations and broadcasts pointing at it handled; then the job deletes its data).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createApiKey } from '../../src/api-keys/service.js';
import { createChatChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { INBOX_DELETE_JOB } from '../../src/lifecycle/inbox-deletion.js';
import { HOUR, ManualClock } from '../../src/platform/clock.js';
import { addresses, createBroadcast, schedule } from '../helpers/broadcasts.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile, referencedKeys, storedKeys } from '../helpers/lifecycle.js';
import { eventsAfter, INGRESS_SECRET, ingressPort, lastEventSeq, rawMail, SmtpDialog, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

const ORIGIN = 'https://shop.example.com';

describe('inboxes after creation', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;
  let seed: Seed;

  before(async () => {
    clock = new ManualClock('2031-03-01T09:00:00Z');
    rx = await startReceiver();
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(async () => {
    await s.stop();
    await rx.close();
  });

  const inboxRow = (id: string) => s.app.db.selectFrom('inboxes').selectAll().where('id', '=', id).executeTakeFirst();

  test('PATCH changes the settings, checks each one, and refuses a body with nothing to change', async () => {
    const inbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing', expectedReplyMinutes: 30 });
    await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const patch = (body: unknown, token = seed.ownerToken) => s.request('PATCH', `/v1/inboxes/${inbox.id}`, { token, body });
    const seq = await lastEventSeq(s);

    const ok = await patch({
      name: 'Billing & Invoices',
      slug: 'invoices',
      locale: 'tr-tr',
      timezone: 'Europe/Istanbul',
      mode: 'live',
      expected_reply_minutes: 90,
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(
      [ok.body.name, ok.body.slug, ok.body.locale, ok.body.timezone, ok.body.mode, ok.body.expected_reply_minutes],
      ['Billing & Invoices', 'invoices', 'tr-TR', 'Europe/Istanbul', 'live', 90],
    );
    assert.equal((await s.request('GET', '/v1/inboxes/invoices', { token: seed.apiKey })).body.id, inbox.id, 'found by its new slug');
    const events = (await eventsAfter(s, seq)).filter((e) => e.type === 'inbox.updated');
    assert.equal(events.length, 1);
    assert.equal(events[0].inbox_id, inbox.id);
    assert.equal(events[0].webhook, 0, 'never sent to webhooks');
    assert.deepEqual(events[0].data.changed.sort(), ['expected_reply_minutes', 'locale', 'mode', 'name', 'slug', 'timezone']);

    // null clears the expected reply time; the same values again change nothing and record no event.
    assert.equal((await patch({ expected_reply_minutes: null })).body.expected_reply_minutes, null);
    const seq2 = await lastEventSeq(s);
    assert.equal((await patch({ mode: 'live' })).status, 200);
    assert.equal((await eventsAfter(s, seq2)).length, 0);

    const before = await inboxRow(inbox.id);
    const refused: [unknown, number, RegExp?][] = [
      [{}, 400, /nothing to change/],
      [{ slug: 'sales' }, 409, /already used/],
      [{ slug: 'Not A Slug' }, 400, /slug/],
      [{ timezone: 'Mars/Olympus_Mons' }, 400, /time zone/],
      [{ locale: 'not a tag!' }, 400, /language tag/],
      [{ mode: 'sometimes' }, 400],
      [{ expected_reply_minutes: 0 }, 400],
      [{ expected_reply_minutes: 1.5 }, 400],
      [{ name: '' }, 400],
      [{ name: '   ' }, 400, /name/],
      [{ identity_secret: 'x' }, 400],
      // One bad field refuses the whole change.
      [{ name: 'Changed', timezone: 'Nowhere/Land' }, 400],
    ];
    for (const [body, status, message] of refused) {
      const r = await patch(body);
      assert.equal(r.status, status, JSON.stringify(body));
      assert.ok(r.body.error.code, 'error shape');
      if (message) assert.match(r.body.error.message, message, JSON.stringify(body));
    }
    assert.deepEqual(await inboxRow(inbox.id), before, 'refusals changed nothing');
  });

  test('who may change and delete an inbox', async () => {
    const inbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Access' });
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Elsewhere' });
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'ro', scopes: ['conversations:read'] })).secret;
    const limitedElsewhere = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'l', scopes: ['workspace:manage'], inboxIds: [other.id] }))
      .secret;
    const limitedHere = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'h', scopes: ['workspace:manage'], inboxIds: [inbox.id] })).secret;
    const patch = (token: string) => s.request('PATCH', `/v1/inboxes/${inbox.id}`, { token, body: { name: 'Renamed' } });
    assert.equal((await patch(agent.token)).status, 403);
    assert.equal((await patch(readOnly)).status, 403);
    assert.equal((await patch(limitedElsewhere)).status, 404, 'an inbox outside the key’s limit is not found');
    assert.equal((await patch(limitedHere)).status, 200);
    assert.equal((await patch(admin.token)).status, 200);
    const del = (token: string) => s.request('DELETE', `/v1/inboxes/${inbox.id}`, { token });
    assert.equal((await del(agent.token)).status, 403);
    assert.equal((await del(readOnly)).status, 403);
    assert.equal((await del(limitedHere)).status, 403, 'a key limited to some inboxes may not delete one');
    assert.equal((await inboxRow(inbox.id))?.deleted_at, null);
    assert.equal((await del(admin.token)).status, 202);
    assert.equal((await del(admin.token)).status, 404, 'deleted once');
    assert.equal((await s.request('PATCH', `/v1/inboxes/${inbox.id}`, { token: seed.ownerToken, body: { name: 'x' } })).status, 404);
  });

  test('DELETE stops the inbox at once and the job removes its data; what pointed at it is handled', async () => {
    const doomed = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Doomed', slug: 'doomed' });
    const keep = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Keep' });
    // An SMTP account (never reached: the broadcast through it is scheduled for later).
    const mail = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: doomed.id }, { smtpPort: 2 });
    const keptMail = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: keep.id });
    const chat = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: doomed.id, name: 'Site', origins: [ORIGIN], allowAnonymous: true });

    // Conversations with files in the doomed inbox, one in the kept inbox by the same customer.
    const conversations: string[] = [];
    for (let i = 0; i < 12; i++) conversations.push((await deliverWithFile(s, mail.address!, { from: 'same@customer.example' })).conversation_id);
    const kept = await deliverWithFile(s, keptMail.address!, { from: 'same@customer.example' });
    const files = await referencedKeys(s.app.db, seed.workspaceId);
    const contactId = (await s.app.db.selectFrom('conversations').select('contact_id').where('id', '=', conversations[0]).executeTakeFirstOrThrow()).contact_id;
    // The contact has an external id in the doomed inbox and one in the kept inbox.
    const withIds = await s.request('PATCH', `/v1/contacts/${contactId}`, {
      token: seed.apiKey,
      body: {
        external_ids: [
          { inbox_id: doomed.id, external_id: 'cust-1' },
          { inbox_id: keep.id, external_id: 'cust-1' },
        ],
      },
    });
    assert.equal(withIds.status, 200, JSON.stringify(withIds.body));

    // A visitor session with an open socket on the chat channel.
    const visitor = await s.request('POST', '/v1/widget/sessions', { body: { public_key: chat.public_key }, headers: { origin: ORIGIN } });
    assert.equal(visitor.status, 201, JSON.stringify(visitor.body));
    const sock = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${visitor.body.token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    sock.on('message', (d) => frames.push(JSON.parse(d.toString())));
    const closed = new Promise<number>((resolve) => sock.on('close', (code) => resolve(code)));
    await new Promise((r) => sock.once('message', r));

    // What points at the inbox: webhook endpoints, API keys, a migration, broadcasts.
    const limitedHook = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `${rx.url}/doomed`, inbox_id: doomed.id } });
    const wideHook = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `${rx.url}/all` } });
    assert.equal(limitedHook.status, 201);
    const onlyDoomed = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'only doomed', inboxIds: [doomed.id] });
    const both = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'both', inboxIds: [doomed.id, keep.id] });
    const migration = await s.request('POST', '/v1/migrations', {
      token: seed.apiKey,
      body: { provider: 'imap', imap: { host: 'imap.example.com' }, source_address: 'old@example.com', inbox_id: doomed.id },
    });
    assert.equal(migration.status, 201, JSON.stringify(migration.body));
    assert.equal(
      (await s.request('PUT', `/v1/migrations/${migration.body.id}/credentials`, { token: seed.apiKey, body: { password: 'app-password' } })).status,
      200,
    );
    const broadcast = await createBroadcast(s, seed.apiKey, doomed.id, addresses(3), { channel_id: mail.id });
    const draft = await createBroadcast(s, seed.apiKey, doomed.id, addresses(2, 'd'));
    assert.equal((await schedule(s, seed.apiKey, broadcast.id, { send_at: new Date(clock.now().getTime() + HOUR).toISOString() })).status, 200);
    const found = async () =>
      (await s.request('GET', '/v1/search?q=file&limit=50', { token: seed.apiKey })).body.conversations.map(
        (h: { conversation: { id: string } }) => h.conversation.id,
      ) as string[];
    assert.ok((await found()).includes(conversations[0]), 'searchable before');
    const overview = async () => (await s.request('GET', '/v1/overview', { token: seed.ownerToken })).body;
    assert.equal((await overview()).unread.inboxes[doomed.id], 12, 'unread before');
    const seq = await lastEventSeq(s);

    const r = await s.request('DELETE', '/v1/inboxes/doomed', { token: seed.ownerToken });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.inbox_id, doomed.id);
    // The migration made its own e-mail channel for old@example.com (the inbox had none for that address).
    assert.deepEqual(r.body.channels_deleted.sort(), [mail.id, chat.id, migration.body.channel_id].sort());
    assert.deepEqual(r.body.webhook_endpoints_deleted, [limitedHook.body.id]);
    assert.deepEqual(r.body.api_keys_revoked, [onlyDoomed.key.id]);
    assert.deepEqual(r.body.api_keys_changed, [both.key.id]);
    assert.deepEqual(r.body.migrations_cancelled, [migration.body.id]);
    assert.deepEqual(r.body.broadcasts_cancelled.sort(), [broadcast.id, draft.id].sort());

    // At once (the job has not run): SMTP 550 for its address, the HTTP ingress refuses it too.
    const { dialog } = await SmtpDialog.open(ingressPort(s));
    await dialog.send('EHLO client.example');
    assert.match(await dialog.send('MAIL FROM:<customer@example.com>'), /^250/);
    assert.match(await dialog.send(`RCPT TO:<${mail.address}>`), /^550/);
    assert.match(await dialog.send(`RCPT TO:<${keptMail.address}>`), /^250/, 'other inboxes still receive');
    dialog.close();
    const http = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(mail.address!)}`, {
      raw: rawMail({ To: mail.address! }),
      token: INGRESS_SECRET,
    });
    assert.equal(http.status, 404);
    // The chat key and the visitor session stop; the open socket is closed.
    // At once, not at the socket's first heartbeat check (25 s after it opened); 15 s leaves a loaded machine room.
    assert.equal(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 15 s'), 15_000).unref())]), 4403);
    assert.ok(frames.some((f) => f.type === 'closed'));
    assert.equal((await s.request('GET', `/v1/widget/config?public_key=${chat.public_key}`, { headers: { origin: ORIGIN } })).status, 404);
    assert.equal((await s.request('GET', '/v1/widget/conversations', { token: visitor.body.token, headers: { origin: ORIGIN } })).status, 401);
    // The inbox and its conversations are gone for readers; the slug is free again.
    assert.equal((await s.request('GET', `/v1/inboxes/${doomed.id}`, { token: seed.apiKey })).status, 404);
    assert.ok(!(await s.request('GET', '/v1/inboxes', { token: seed.apiKey })).body.data.some((i: { id: string }) => i.id === doomed.id));
    assert.equal((await s.request('GET', `/v1/conversations/${conversations[0]}`, { token: seed.apiKey })).status, 404);
    const listed = await s.request('GET', '/v1/conversations?limit=200', { token: seed.apiKey });
    assert.ok(!listed.body.data.some((c: { inbox_id: string }) => c.inbox_id === doomed.id));
    assert.ok(listed.body.data.some((c: { id: string }) => c.id === kept.conversation_id));
    assert.equal((await overview()).unread.inboxes[doomed.id], undefined, 'no unread count for the deleted inbox');
    const foundAfter = await found();
    assert.ok(foundAfter.includes(kept.conversation_id) && !foundAfter.some((id) => conversations.includes(id)), 'search finds only the kept inbox');
    assert.equal((await s.request('POST', '/v1/inboxes', { token: seed.ownerToken, body: { name: 'New doomed', slug: 'doomed' } })).status, 201);
    // Nothing new may point at it.
    assert.equal((await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `${rx.url}/x`, inbox_id: doomed.id } })).status, 400);
    assert.equal(
      (await s.request('POST', '/v1/channels', { token: seed.ownerToken, body: { kind: 'chat', inbox_id: doomed.id, name: 'x', origins: [ORIGIN] } })).status,
      404,
    );
    // Endpoints, keys, migration, broadcasts.
    assert.equal(await s.app.db.selectFrom('webhook_endpoints').select('id').where('id', '=', limitedHook.body.id).executeTakeFirst(), undefined);
    assert.ok(
      await s.app.db.selectFrom('webhook_endpoints').select('id').where('id', '=', wideHook.body.id).executeTakeFirst(),
      'a workspace-wide endpoint stays',
    );
    assert.equal((await s.request('GET', '/v1/inboxes', { token: onlyDoomed.secret })).status, 401, 'a key that reached only the inbox is revoked');
    const bothNow = await s.request('GET', '/v1/inboxes', { token: both.secret });
    assert.deepEqual(
      bothNow.body.data.map((i: { id: string }) => i.id),
      [keep.id],
    );
    const m = await s.request('GET', `/v1/migrations/${migration.body.id}`, { token: seed.apiKey });
    assert.equal(m.body.state, 'cancelled');
    const mRow = await s.app.db
      .selectFrom('mailbox_migrations')
      .select(['password_sealed', 'end_reason'])
      .where('id', '=', migration.body.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(mRow, { password_sealed: null, end_reason: 'inbox_deleted' });
    const bRows = await s.app.db.selectFrom('broadcasts').select(['id', 'status']).where('inbox_id', '=', doomed.id).execute();
    assert.ok(bRows.every((b) => b.status === 'cancelled'));
    const deletedEvent = (await eventsAfter(s, seq)).find((e) => e.type === 'inbox.deleted')!;
    assert.ok(deletedEvent, 'inbox.deleted on the realtime stream');
    assert.equal(deletedEvent.webhook, 0);

    // The job: conversations with their files, the inbox's external ids (contact.updated), broadcasts, then the inbox row.
    const seqBeforeJob = await lastEventSeq(s);
    await s.app.jobs.drain();
    const lines = s.logs.filter((l) => l.msg === 'inbox deletion' && l.inbox_id === doomed.id);
    assert.ok(lines.length >= 1);
    const last = lines.at(-1)!;
    assert.deepEqual([last.conversations_deleted, last.conversations_left, last.files_deleted, last.done], [12, 0, 24, true]);
    assert.equal(await inboxRow(doomed.id), undefined, 'the inbox row is gone');
    assert.equal((await s.app.db.selectFrom('conversations').select('id').where('inbox_id', '=', doomed.id).execute()).length, 0);
    assert.equal((await s.app.db.selectFrom('broadcasts').select('id').where('inbox_id', '=', doomed.id).execute()).length, 0);
    const onDisk = storedKeys(s.env.SVC_DATA_DIR);
    const keptFiles = await referencedKeys(s.app.db, seed.workspaceId);
    for (const key of files) assert.equal(onDisk.has(key), keptFiles.includes(key), `${key}: only the kept inbox's files stay`);
    assert.equal(keptFiles.length, 2);
    const contact = await s.request('GET', `/v1/contacts/${contactId}`, { token: seed.apiKey });
    assert.equal(contact.status, 200, 'the contact stays in the workspace');
    assert.deepEqual(contact.body.external_ids, [{ inbox_id: keep.id, external_id: 'cust-1' }]);
    const contactEvents = (await eventsAfter(s, seqBeforeJob)).filter((e) => e.type === 'contact.updated' && e.contact_id === contactId);
    assert.equal(contactEvents.length, 1);
    assert.deepEqual(contactEvents[0].data.contact.external_ids, [{ inbox_id: keep.id, external_id: 'cust-1' }]);
    const migrationAfter = await s.request('GET', `/v1/migrations/${migration.body.id}`, { token: seed.apiKey });
    assert.equal(migrationAfter.status, 200, 'the migration keeps its record');
    const record = await s.app.db.selectFrom('inbox_deletions').selectAll().where('inbox_id', '=', doomed.id).executeTakeFirstOrThrow();
    assert.ok(record.finished_at);
    assert.equal(record.requested_by, seed.ownerId);
    assert.equal((await s.request('GET', `/v1/conversations/${kept.conversation_id}`, { token: seed.apiKey })).status, 200);
  });

  test('a lost inbox deletion job is queued again by the hourly job', async () => {
    await s.app.jobs.drain(); // the hourly job ran; it is due again in an hour
    const inbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Lost' });
    const channel = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inbox.id });
    await deliverWithFile(s, channel.address!);
    assert.equal((await s.request('DELETE', `/v1/inboxes/${inbox.id}`, { token: seed.ownerToken })).status, 202);
    await s.app.db.deleteFrom('jobs').where('kind', '=', INBOX_DELETE_JOB).execute();
    await s.app.jobs.drain();
    assert.equal((await s.app.db.selectFrom('conversations').select('id').where('inbox_id', '=', inbox.id).execute()).length, 1, 'no job, nothing happens');
    clock.advance(HOUR);
    await s.app.jobs.drain();
    const line = s.logs.filter((l) => l.msg === 'retention').at(-1)!;
    assert.equal(line.inbox_deletions_queued, 1);
    assert.equal((await s.app.db.selectFrom('conversations').select('id').where('inbox_id', '=', inbox.id).execute()).length, 0);
    assert.equal(await inboxRow(inbox.id), undefined);
  });

  test('the routes are in /v1/openapi.json with their schemas', async () => {
    const doc = (await s.request('GET', '/v1/openapi.json')).body;
    assert.ok(doc.paths['/v1/inboxes/{inboxId}'].patch.requestBody.content['application/json'].schema);
    assert.ok(doc.paths['/v1/inboxes/{inboxId}'].patch.responses['200']);
    assert.ok(doc.paths['/v1/inboxes/{inboxId}'].delete.responses['202'].content['application/json'].schema);
    for (const name of ['InboxPatch', 'InboxDeleted', 'Inbox']) assert.ok(doc.components.schemas[name], name);
    assert.deepEqual(Object.keys(doc.components.schemas.InboxPatch.properties).sort(), [
      'expected_reply_minutes',
      'locale',
      'mode',
      'name',
      'slug',
      'timezone',
    ]);
  });
});
