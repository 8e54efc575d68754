// Help Scout migrations against a loopback fake of its REST API, from draft to completed: the app
// credentials tested on PUT, the token (renewed when it expires), pages, threads, notes (agents as
// members or by original name), attachments, sync from the stored modifiedSince, finish. The scene
// is helpdesk-scene.ts (the HTTP client: helpdesk-http.test.ts; Zendesk: helpdesk-zendesk.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { daysAgo } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { iso, startHelpdeskScene, stopHelpdeskScene } from './helpdesk-scene.js';

describe('Help Scout migrations', () => {
  const scene = sceneOf(startHelpdeskScene, stopHelpdeskScene);

  test('Help Scout from draft to completed: token (renewed), pages, threads, notes, attachments, sync, finish', async () => {
    const { s, seed, channelId, bob, helpScout, now, clock, api } = scene();
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
});
