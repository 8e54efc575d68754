// The inbox greeting: one automatic, threaded answer to the first mail of a new conversation, and
// each "never" rule (automatic mail, noreply/list addresses, the team's own addresses, 24 hours per
// contact, a migration under way, imported history).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isNoReplyAddress } from '../../src/greeting/rules.js';
import { DAY, HOUR, ManualClock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { rawMail, seedEmailChannel, startMailingServer } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'greeting-secret';

describe('inbox greeting', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date('2026-11-02T09:00:00Z'));

  before(async () => {
    ({ s, seed, address, sink } = await startMailingServer({ ingressSecret: SECRET, clock }));
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function customerMail(headers: Record<string, string> = {}) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, ...headers }), token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function greetingsIn(conversationId: string) {
    await s.app.jobs.drain();
    const r = await s.request('GET', `/v1/conversations/${conversationId}/messages?order=asc`, { token: seed.apiKey });
    return (r.body.data as { direction: string; automatic: boolean; details: { greeting?: boolean } | null; body: string; status: string }[]).filter(
      (m) => m.details?.greeting,
    );
  }

  async function mailedCount() {
    await s.app.jobs.drain();
    return sink.messages.length;
  }

  test('off by default; settings are validated and limited to managers', async () => {
    const r = await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey });
    assert.equal(r.status, 200);
    assert.equal(r.body.enabled, false);
    assert.ok(r.body.text.en && r.body.text.tr);
    const c = await customerMail({ From: 'off@cust.example' });
    assert.deepEqual(await greetingsIn(c.conversation_id), []);

    const empty = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: true, text: { en: '   ' } } });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, 'invalid_request');
    assert.equal(
      (await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey })).body.enabled,
      false,
      'a refused change changes nothing',
    );
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const refused = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, {
      token: agent.token,
      headers: { 'svc-workspace': seed.workspaceId },
      body: { enabled: true },
    });
    assert.equal(refused.status, 403);

    const on = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, {
      token: seed.apiKey,
      body: { enabled: true, text: { en: 'Hello, we got your mail.', tr: 'Merhaba, e-postanızı aldık.' } },
    });
    assert.equal(on.status, 200);
    assert.deepEqual(on.body.text, { en: 'Hello, we got your mail.', tr: 'Merhaba, e-postanızı aldık.' });
    assert.equal(on.body.held, null, 'the inbox has an e-mail channel with an SMTP server: nothing holds the greeting');
  });

  test('an inbox whose e-mail channels cannot send says the greeting is held (issue 43 item 6)', async () => {
    const other = await s.request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: 'No outgoing' } });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    const on = await s.request('PATCH', `/v1/inboxes/${other.body.id}/greeting`, { token: seed.apiKey, body: { enabled: true } });
    assert.equal(on.body.held, 'no_outgoing_mail', 'no e-mail channel');
    const ch = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: { kind: 'email', inbox_id: other.body.id, name: 'Receive only', address: 'receive-only@acme.example' },
    });
    assert.equal(ch.status, 201, JSON.stringify(ch.body));
    assert.equal(
      (await s.request('GET', `/v1/inboxes/${other.body.id}/greeting`, { token: seed.apiKey })).body.held,
      'no_outgoing_mail',
      'a channel with no SMTP server',
    );
  });

  test('the first mail of a new conversation gets one threaded automatic reply; a follow-up gets none', async () => {
    const before = await mailedCount();
    const c = await customerMail({ From: 'Ada <ada@cust.example>', Subject: 'Order 42', 'Message-ID': '<g1@cust.example>' });
    const greetings = await greetingsIn(c.conversation_id);
    assert.equal(greetings.length, 1);
    assert.equal(greetings[0].direction, 'out');
    assert.equal(greetings[0].automatic, true);
    assert.equal(greetings[0].body, 'Hello, we got your mail.');
    assert.equal(await mailedCount(), before + 1);
    const mail = sink.messages[before];
    assert.deepEqual(mail.to, ['ada@cust.example']);
    assert.equal(mail.parsed.headers.get('auto-submitted'), 'auto-replied');
    assert.equal(mail.parsed.inReplyTo, '<g1@cust.example>');
    assert.equal(mail.parsed.subject, 'Re: Order 42');
    // The list keeps showing the customer's words, not the greeting (issue 43).
    const listed = await s.request('GET', '/v1/conversations?limit=200', { token: seed.apiKey });
    assert.equal(listed.body.data.find((x: { id: string }) => x.id === c.conversation_id).preview, 'Hello there.');
    // The customer's reply threads into the conversation and is not greeted again.
    clock.advance(2 * DAY);
    const reply = await customerMail({ From: 'ada@cust.example', Subject: 'Re: Order 42', 'In-Reply-To': '<g1@cust.example>' });
    assert.equal(reply.conversation_id, c.conversation_id);
    assert.equal((await greetingsIn(c.conversation_id)).length, 1);
    assert.equal(await mailedCount(), before + 1);
  });

  test('the language follows the inbox locale, and the contact’s locale attribute before it', async () => {
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey, body: { locale: 'tr-TR' } });
    const c = await customerMail({ From: 'ayse@cust.example' });
    assert.equal((await greetingsIn(c.conversation_id))[0].body, 'Merhaba, e-postanızı aldık.');
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey, body: { locale: 'en' } });
  });

  test('never more than once per contact in 24 hours', async () => {
    const first = await customerMail({ From: 'bob@cust.example', Subject: 'One' });
    assert.equal((await greetingsIn(first.conversation_id)).length, 1);
    clock.advance(23 * HOUR);
    const second = await customerMail({ From: 'bob@cust.example', Subject: 'Two' });
    assert.notEqual(second.conversation_id, first.conversation_id);
    assert.equal((await greetingsIn(second.conversation_id)).length, 0);
    clock.advance(2 * HOUR);
    const third = await customerMail({ From: 'bob@cust.example', Subject: 'Three' });
    assert.equal((await greetingsIn(third.conversation_id)).length, 1);
  });

  test('never to automatic mail, noreply-style or list addresses', async () => {
    const cases: Record<string, string>[] = [
      { From: 'robot@cust.example', 'Auto-Submitted': 'auto-replied' },
      { From: 'news@cust.example', 'List-Id': '<news.cust.example>' },
      { From: 'bulk@cust.example', Precedence: 'bulk' },
      { From: 'no-reply@cust.example' },
      { From: 'noreply+abc@cust.example' },
      { From: 'owner-list@cust.example' },
      { From: 'team-request@cust.example' },
      { From: 'person@cust.example', 'Reply-To': 'donotreply@cust.example' },
      { From: 'MAILER-DAEMON@cust.example' },
    ];
    for (const headers of cases) {
      const c = await customerMail(headers);
      assert.deepEqual(await greetingsIn(c.conversation_id), [], JSON.stringify(headers));
    }
    assert.equal(isNoReplyAddress('ada@cust.example'), false);
    assert.equal(isNoReplyAddress('reply-desk@cust.example'), false);
  });

  test('never to the team’s own addresses: members and the workspace’s channels', async () => {
    const member = await addPerson(s.app, seed.workspaceId, 'agent', `agent-${newId('ct').slice(-6)}@team.example`);
    const fromMember = await customerMail({ From: member.email });
    assert.deepEqual(await greetingsIn(fromMember.conversation_id), []);
    // Another channel of the workspace (another inbox) writing in.
    const other = await seedEmailChannel(s.app, seed, { address: `sales-${newId('ct').slice(-6)}@acme.example` });
    const fromChannel = await customerMail({ From: other.address! });
    assert.deepEqual(await greetingsIn(fromChannel.conversation_id), []);
  });

  test('never while a migration into the inbox is under way', async () => {
    const channel = await s.app.db.selectFrom('channels').select('id').where('address', '=', address).executeTakeFirstOrThrow();
    const m = await s.request('POST', '/v1/migrations', {
      token: seed.apiKey,
      body: { provider: 'imap', imap: { host: 'imap.example.com' }, source_address: 'old@example.com', inbox_id: seed.inboxId, channel_id: channel.id },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    const migrationId = m.body.id as string;
    await s.app.db.updateTable('mailbox_migrations').set({ state: 'syncing' }).where('id', '=', migrationId).execute();
    const c = await customerMail({ From: 'during@cust.example' });
    assert.deepEqual(await greetingsIn(c.conversation_id), []);
    // The settings say so (issue 43 item 6): the card shows why nothing is sent.
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey })).body.held, 'migration_underway');
    await s.app.db.updateTable('mailbox_migrations').set({ state: 'completed' }).where('id', '=', migrationId).execute();
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey })).body.held, null);
    const later = await customerMail({ From: 'after@cust.example' });
    assert.equal((await greetingsIn(later.conversation_id)).length, 1);
  });

  test('switched off again: nothing more', async () => {
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: false } });
    const c = await customerMail({ From: 'late@cust.example' });
    assert.deepEqual(await greetingsIn(c.conversation_id), []);
  });
});
