// Notifications to the team: who is told of what (a new conversation, an assignment, a customer
// reply, a mention in a note), each once; the preferences; and the ways to tell: realtime, Web Push,
// and batched e-mail for members without an open panel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { mentionedMembers } from '../../src/notifications/mentions.js';
import type { NotifyEventPayload } from '../../src/notifications/reaction.js';
import { notifyEvents } from '../../src/notifications/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { markConnection } from '../../src/realtime/connections.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { deliverMail } from '../helpers/mail.js';
import { type Person, SUBJECT, startNotifyingServer, subscribeAt } from '../helpers/notifications.js';
import type { FakeBrowser, PushService } from '../helpers/push-service.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

test('mentions: display name (spaces allowed, longest wins) or address local part, any case; not inside words or addresses', () => {
  const ann = { personId: 'a', email: 'ann@x.example', name: 'Ann' };
  const annLee = { personId: 'b', email: 'al@x.example', name: 'Ann Lee' };
  const ayse = { personId: 'c', email: 'ayse.yilmaz@x.example', name: 'Ayşe Yılmaz' };
  const all = [ann, annLee, ayse];
  assert.deepEqual(mentionedMembers('@ann lee, look', all), [annLee]);
  assert.deepEqual(mentionedMembers('@Ann: and @AYŞE YILMAZ!', all), [ann, ayse]);
  assert.deepEqual(mentionedMembers('(@ayse.yilmaz) @al', all), [ayse, annLee]);
  assert.deepEqual(mentionedMembers('mail ann@x.example or @annie or @ann_x', all), []);
  assert.deepEqual(mentionedMembers('@ann @Ann @ANN', all), [ann], 'once each');
});

describe('notifications to the team', () => {
  let s: TestServer;
  let clock: ManualClock;
  let sink: SmtpSink;
  let push: PushService;
  let seed: Seed;
  let owner: Person;
  let ann: Person;
  let bob: Person;
  /** An agent limited to another inbox. */
  let lim: Person;
  let address: string;
  let stop: () => Promise<void>;

  before(async () => {
    ({ s, clock, sink, push, seed, address, stop } = await startNotifyingServer());
    const ownerRow = await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow();
    owner = { personId: seed.ownerId, email: ownerRow.email, token: seed.ownerToken };
    ann = await addPerson(s.app, seed.workspaceId, 'agent', `ann.lee-${Date.now()}@team.example`);
    await s.app.db.updateTable('people').set({ name: 'Ann Lee' }).where('id', '=', ann.personId).execute();
    bob = await addPerson(s.app, seed.workspaceId, 'agent');
    lim = await addPerson(s.app, seed.workspaceId, 'agent');
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Other' });
    await s.app.db
      .updateTable('memberships')
      .set({ inbox_ids: JSON.stringify([other.id]) })
      .where('person_id', '=', lim.personId)
      .execute();
    // Everyone has a panel open unless a test says otherwise: no e-mail by default.
    for (const p of [owner, ann, bob, lim]) await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'member', subjectId: p.personId });
  });
  after(() => stop());

  async function notificationsOf(p: Person) {
    return s.app.db.selectFrom('notifications').selectAll().where('person_id', '=', p.personId).orderBy('created_at').orderBy('id').execute();
  }
  async function count(p: Person, trigger?: string) {
    return (await notificationsOf(p)).filter((n) => !trigger || n.trigger === trigger).length;
  }
  async function assign(conversationId: string, by: Person, to: Person | null) {
    const r = await s.request('PATCH', `/v1/conversations/${conversationId}`, { token: by.token, body: { assignee_id: to?.personId ?? null } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  async function note(conversationId: string, by: Person, body: string) {
    const r = await s.request('POST', `/v1/conversations/${conversationId}/messages`, { token: by.token, body: { kind: 'note', body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  async function replyFromCustomer(conversationId: string) {
    const first = await s.app.db
      .selectFrom('mail_ids')
      .select('rfc_id')
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    clock.advance(1000);
    return deliverMail(s, address, { 'In-Reply-To': `<${first.rfc_id}>`, Subject: 'Re: Help' }, 'Any news?\r\n');
  }
  async function newConversation(subject = 'Help') {
    clock.advance(1000);
    return deliverMail(s, address, { Subject: subject });
  }

  test('a new conversation: every member who sees the inbox, on realtime; not a member limited to another inbox', async () => {
    const before = { owner: await count(owner), ann: await count(ann), lim: await count(lim) };
    const { conversation_id } = await newConversation('Broken order');
    await s.app.jobs.drain();
    assert.equal(await count(owner, 'new_conversation'), 1);
    assert.equal((await count(ann)) - before.ann, 1);
    assert.equal((await count(lim)) - before.lim, 0, 'the inbox is not theirs');
    const mine = (await notificationsOf(ann)).at(-1)!;
    assert.equal(mine.conversation_id, conversation_id);
    assert.match(mine.title, /Broken order/);

    // The realtime event reaches only the member it is for.
    const annEvents = await s.request('GET', '/v1/events?limit=200', { token: ann.token });
    const shown = annEvents.body.data.filter((e: any) => e.type === 'notification');
    assert.ok(shown.some((e: any) => e.data.notification.id === mine.id && e.data.notification.url.endsWith(`/conversations/${conversation_id}`)));
    const ownerEvents = await s.request('GET', '/v1/events?limit=200', { token: seed.ownerToken });
    assert.ok(!ownerEvents.body.data.some((e: any) => e.type === 'notification' && e.data.notification.id === mine.id), 'not another member’s notification');
    const keyEvents = await s.request('GET', '/v1/events?limit=200', { token: seed.apiKey });
    assert.ok(!keyEvents.body.data.some((e: any) => e.type === 'notification'), 'API keys never see notifications');
    const deliveries = await s.app.db.selectFrom('events').select('webhook').where('type', '=', 'notification').execute();
    assert.ok(deliveries.length > 0 && deliveries.every((d) => d.webhook === 0), 'never a webhook');
  });

  test('events told together (one batch of notifications.event jobs): each member once per event; the batch run again tells nobody twice', async () => {
    await s.app.jobs.drain();
    const before = { owner: await count(owner), ann: await count(ann), bob: await count(bob), lim: await count(lim) };
    const conversations: string[] = [];
    for (const subject of ['Batch one', 'Batch two', 'Batch three']) conversations.push((await newConversation(subject)).conversation_id);
    const stored = await s.app.db.selectFrom('jobs').select('payload').where('kind', '=', 'notifications.event').execute();
    assert.equal(stored.length, 3, 'one job per new conversation, stored with the mail');
    const payloads = stored.map((j) => JSON.parse(j.payload) as NotifyEventPayload);
    assert.equal(await notifyEvents(s.app, [...payloads, payloads[0]]), 9, 'three members, three events; an event given twice is told once');
    assert.equal(await notifyEvents(s.app, payloads), 0, 'the batch run again tells nobody twice');
    // The stored jobs run (claimed together) after their work was done: nothing more.
    assert.equal(await s.app.jobs.drain(), 3);
    assert.equal((await count(owner)) - before.owner, 3);
    assert.equal((await count(ann)) - before.ann, 3);
    assert.equal((await count(bob)) - before.bob, 3);
    assert.equal((await count(lim)) - before.lim, 0, 'the inbox is not theirs');
    for (const conversationId of conversations) {
      const told = await s.app.db.selectFrom('notifications').select('person_id').where('conversation_id', '=', conversationId).execute();
      assert.deepEqual(told.map((n) => n.person_id).sort(), [owner, ann, bob].map((p) => p.personId).sort());
    }
    const annEvents = await s.request('GET', '/v1/events?limit=200', { token: ann.token });
    const shown = annEvents.body.data.filter((e: any) => e.type === 'notification' && conversations.includes(e.data.notification.conversation_id));
    assert.equal(shown.length, 3, 'one realtime notification per event');
  });

  test('assignment notifies the assignee, not someone assigning themselves', async () => {
    const { conversation_id } = await newConversation();
    await s.app.jobs.drain();
    const before = await count(ann, 'assigned');
    await assign(conversation_id, owner, ann);
    await s.app.jobs.drain();
    assert.equal((await count(ann, 'assigned')) - before, 1);
    const ownBefore = await count(bob, 'assigned');
    await assign(conversation_id, bob, bob);
    await s.app.jobs.drain();
    assert.equal(await count(bob, 'assigned'), ownBefore, 'their own action');
  });

  test('a customer reply notifies the assignee only; not in a conversation marked as spam', async () => {
    const { conversation_id } = await newConversation();
    await assign(conversation_id, owner, ann);
    await s.app.jobs.drain();
    const before = { ann: await count(ann, 'customer_reply'), owner: await count(owner, 'customer_reply'), bob: await count(bob) };
    const reply = await replyFromCustomer(conversation_id);
    assert.equal(reply.conversation_id, conversation_id, 'threaded');
    await s.app.jobs.drain();
    assert.equal((await count(ann, 'customer_reply')) - before.ann, 1);
    assert.equal((await notificationsOf(ann)).at(-1)!.body, 'Any news?');
    assert.equal(await count(owner, 'customer_reply'), before.owner);
    assert.equal(await count(bob), before.bob);

    const spam = await s.request('PATCH', `/v1/conversations/${conversation_id}`, { token: owner.token, body: { spam: true } });
    assert.equal(spam.status, 200);
    await replyFromCustomer(conversation_id);
    const stored = await s.app.db.selectFrom('jobs').select('id').where('kind', '=', 'notifications.event').execute();
    assert.equal(stored.length, 0, 'spam stores no notification work');
    await s.app.jobs.drain();
    assert.equal((await count(ann, 'customer_reply')) - before.ann, 1, 'spam notifies nobody');
  });

  test('a mention in a note, by display name or address local part, ignoring case; never the author; not an address', async () => {
    const { conversation_id } = await newConversation();
    await s.app.jobs.drain();
    const bobLocal = bob.email.split('@')[0];
    const before = { ann: await count(ann, 'mention'), bob: await count(bob, 'mention'), owner: await count(owner, 'mention') };
    await note(conversation_id, owner, `@ann lee and @${bobLocal.toUpperCase()}, please look. Mail ${ann.email} if needed.`);
    await s.app.jobs.drain();
    assert.equal((await count(ann, 'mention')) - before.ann, 1);
    assert.equal((await count(bob, 'mention')) - before.bob, 1);
    assert.match((await notificationsOf(ann)).at(-1)!.title, /mentioned you/);
    await note(conversation_id, ann, `Noted, @Ann Lee will do it. Write to x@${bobLocal} or a${'@'}${bobLocal}`);
    await s.app.jobs.drain();
    assert.equal((await count(ann, 'mention')) - before.ann, 1, 'the author is never notified');
    assert.equal((await count(bob, 'mention')) - before.bob, 1, 'an address is no mention');
    assert.equal(await count(owner, 'mention'), before.owner);
    await note(conversation_id, owner, `@${lim.email.split('@')[0]} can you see this?`);
    await s.app.jobs.drain();
    assert.equal(await count(lim, 'mention'), 0, 'a member who cannot see the inbox is not told');
  });

  test('preferences: defaults, a partial change, bad input changes nothing, API keys are refused', async () => {
    const got = await s.request('GET', '/v1/me/notification-preferences', { token: bob.token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.preferences.new_conversation, { realtime: true, push: true, email: false });
    assert.deepEqual(got.body.available, { realtime: true, push: true, email: true });
    for (const bad of [{ assigned: { sms: true } }, { lunch: { push: true } }, { assigned: { push: 'yes' } }, []]) {
      const r = await s.request('PATCH', '/v1/me/notification-preferences', { token: bob.token, body: bad });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const changed = await s.request('PATCH', '/v1/me/notification-preferences', { token: bob.token, body: { assigned: { realtime: false } } });
    assert.equal(changed.status, 200);
    assert.deepEqual(changed.body.preferences.assigned, { realtime: false, push: true, email: true });
    assert.deepEqual(changed.body.preferences.mention, { realtime: true, push: true, email: true });
    const key = await s.request('GET', '/v1/me/notification-preferences', { token: seed.apiKey });
    assert.equal(key.status, 403);

    const { conversation_id } = await newConversation();
    await s.app.jobs.drain();
    const seq = (
      await s.app.db
        .selectFrom('events')
        .select((eb) => eb.fn.max('seq').as('m'))
        .executeTakeFirstOrThrow()
    ).m;
    await assign(conversation_id, owner, bob);
    await s.app.jobs.drain();
    const last = (await notificationsOf(bob)).at(-1)!;
    assert.equal(last.trigger, 'assigned', 'still recorded');
    const realtime = await s.app.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'notification')
      .where('person_id', '=', bob.personId)
      .where('seq', '>', Number(seq))
      .execute();
    assert.equal(realtime.length, 0, 'realtime switched off for assignments');
    const doc = await s.request('GET', '/v1/openapi.json');
    assert.ok(doc.body.paths['/v1/me/notification-preferences'].patch);
    assert.ok(doc.body.components.schemas.NotificationPreferences);
  });

  test('Web Push: VAPID-signed, encrypted per RFC 8291 for the subscription; 404 and 410 remove it; other failures are retried', async () => {
    const subs: Record<string, { id: string; browser: FakeBrowser }> = {};
    for (const name of ['ok', 'gone', 'missing', 'flaky']) subs[name] = await subscribeAt(s, push, ann, name);
    push.answer.set('/push/gone', 410);
    push.answer.set('/push/missing', 404);
    push.answer.set('/push/flaky', 503);
    const { conversation_id } = await newConversation('Where is my parcel?');
    await s.app.jobs.drain();
    assert.deepEqual(push.problems, []);
    const ok = push.received.filter((r) => r.path === '/push/ok');
    assert.equal(ok.length, 1);
    assert.equal(ok[0].jwt.claims.sub, SUBJECT);
    assert.equal(ok[0].jwt.claims.aud, push.origin);
    assert.equal(ok[0].payload.conversation_id, conversation_id);
    assert.match(String(ok[0].payload.title), /Where is my parcel\?/);
    assert.equal(ok[0].payload.url, `${s.app.config.publicUrl}/conversations/${conversation_id}`);

    const left = await s.app.db.selectFrom('push_subscriptions').select('id').where('person_id', '=', ann.personId).execute();
    assert.deepEqual(left.map((r) => r.id).sort(), [subs.flaky.id, subs.ok.id].sort(), '404 and 410: removed');
    assert.equal(push.received.filter((r) => r.path === '/push/missing' || r.path === '/push/gone').length, 2, 'each was tried once');
    const retry = await s.app.db.selectFrom('jobs').selectAll().where('kind', '=', 'notifications.push').execute();
    assert.equal(retry.length, 1, 'the 503 waits for a retry');
    assert.match(retry[0].last_error ?? '', /503/);
    assert.ok(!JSON.stringify(s.logs).includes(subs.flaky.browser.auth), 'keys never reach the logs');
    push.answer.set('/push/flaky', 201);
    clock.advance(MINUTE);
    await s.app.jobs.drain();
    assert.equal(push.received.filter((r) => r.path === '/push/flaky').length, 2, 'sent again after the backoff, and accepted');
    assert.equal((await s.app.db.selectFrom('jobs').select('id').where('kind', '=', 'notifications.push').execute()).length, 0);
    await s.app.db.deleteFrom('push_subscriptions').where('person_id', '=', ann.personId).execute();
  });

  test('e-mail only without an open panel for 5 minutes, batched: at most one mail per member per 10 minutes', async () => {
    const on = await s.request('PATCH', '/v1/me/notification-preferences', { token: ann.token, body: { new_conversation: { email: true } } });
    assert.equal(on.status, 200);
    const mailsTo = (p: Person) => sink.messages.filter((m) => m.to.includes(p.email));
    // Ann's panel was open a moment ago: no mail.
    await newConversation('While here');
    await s.app.jobs.drain();
    assert.equal(mailsTo(ann).length, 0);

    clock.advance(6 * MINUTE);
    await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'member', subjectId: owner.personId });
    await newConversation('First away');
    await s.app.jobs.drain();
    await sink.waitFor(1);
    assert.equal(mailsTo(ann).length, 1, 'the first one at once');
    assert.match(mailsTo(ann)[0].parsed.text ?? '', /First away/);
    assert.equal(mailsTo(owner).length, 0, 'the owner has a panel open');
    assert.equal(mailsTo(bob).length, 0, 'new conversations are not mailed by default');

    await newConversation('Second away');
    await newConversation('Third away');
    await s.app.jobs.drain();
    assert.equal(mailsTo(ann).length, 1, 'the rest waits');
    clock.advance(10 * MINUTE);
    await s.app.jobs.drain();
    const mails = mailsTo(ann);
    assert.equal(mails.length, 2, 'one mail for both');
    assert.match(mails[1].parsed.subject ?? '', /2 new notifications/);
    assert.match(mails[1].parsed.text ?? '', /Second away[\s\S]*Third away/);
    assert.equal(mails[1].parsed.headers.get('auto-submitted'), 'auto-generated');
    clock.advance(10 * MINUTE);
    await s.app.jobs.drain();
    assert.equal(mailsTo(ann).length, 2);
    assert.equal(
      (
        await s.app.db
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', 'notifications.mail')
          .where('unique_key', '=', `notifications.mail:${ann.personId}`)
          .execute()
      ).length,
      0,
      'nothing waiting: the job ends',
    );
  });
});
