// Undo send and send later (issue 34): replies, forwards and new conversations with `send_at` are
// held as `scheduled`; the stored job hands them to sending at their time exactly once, and
// message.created (webhooks) fires only then. Cancel before: nothing is mailed, the text comes
// back; after: 409. Jobs run only when the test drains them, on a moved clock. Held new
// conversations and forwards, and kill -9 during a hold: send-later-held.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sendScheduledMessage } from '../../src/conversations/send-later.js';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { deliverMail } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { startSendLaterScene, stopSendLaterScene } from './send-later-scene.js';

describe('undo send and send later', () => {
  const scene = sceneOf(startSendLaterScene, stopSendLaterScene);

  test('undo within the delay: nothing is mailed, no webhook, the text comes back; the job finds nothing', async () => {
    const { s, clock, sink, seed, address, hooked, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Ada <ada@cust.example>', Subject: 'Undo me' });
    // The stored reply carries the inbox's signature; what comes back is the text as written.
    const signed = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, { token: seed.apiKey, body: { body: 'The support team' } });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const before = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { html: '<p>Oops, <b>wrong</b> one</p>', send_at: later(10_000) },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status, 'scheduled');
    assert.equal(r.body.send_at, later(10_000));
    await s.app.jobs.drain();
    const cancelled = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.body, 'Oops, wrong one');
    assert.equal(cancelled.body.html, '<p>Oops, <b>wrong</b> one</p>');
    assert.deepEqual(
      cancelled.body.to.map((t: { address: string }) => t.address),
      ['ada@cust.example'],
    );
    clock.advance(60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'the smtp sink stays empty');
    assert.deepEqual(hooked(r.body.id), [], 'no message.created webhook');
    const gone = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(gone.status, 404);
    // Twice: the message is gone.
    const again = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(again.status, 404);
    await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, { token: seed.apiKey, body: { body: '' } });
  });

  test('a scheduled reply goes out at its time exactly once, message.created fires then; cancel afterwards is 409', async () => {
    const { s, clock, rx, sink, seed, address, hook, hooked, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Bo <bo@cust.example>', Subject: 'Later' });
    const before = sink.messages.length;
    const at = later(3 * 60 * 60_000);
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Good morning!', send_at: at },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status, 'scheduled');
    clock.advance(3 * 60 * 60_000 - 1000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing before its time');
    assert.deepEqual(hooked(r.body.id), []);
    const listed = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(listed.body.status, 'scheduled');
    assert.equal(listed.body.send_at, at);

    clock.advance(1000);
    await s.app.jobs.drain();
    const got = await sink.waitFor(before + 1);
    assert.equal(got[before].parsed.text!.trim().startsWith('Good morning!'), true);
    const hooks = hooked(r.body.id);
    assert.equal(hooks.length, 1, 'message.created once, when handed to sending');
    assert.equal(hooks[0].type, 'message.created');
    const sent = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(sent.body.status, 'sent');
    assert.equal(sent.body.send_at, null);

    // The job run again (another process, a kill -9 before it ended) hands nothing over twice.
    assert.deepEqual(await sendScheduledMessage(s.app, r.body.id), { done: 'not_scheduled' });
    clock.advance(60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 1, 'exactly once');
    assert.equal(rx.received.filter((d) => d.path === hook.path && d.body.includes(r.body.id)).length, 1);

    const late = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'message_state');
  });

  test('"unless the customer answers first": kept back as a note and its author told when the customer wrote; sent when not', async () => {
    const { s, clock, sink, seed, address, hooked, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Follow up', 'Message-ID': '<cy-1@cust.example>' });
    const before = sink.messages.length;
    const schedule = (body: string) =>
      s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
        token: seed.apiKey,
        body: { body, send_at: later(24 * 60 * 60_000), unless_customer_replies: true, member_id: seed.ownerId },
      });
    const r = await schedule('Any news?');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.details.unless_customer_replies, true);
    // Without send_at it means nothing: refused, naming the field.
    const bare = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'x', unless_customer_replies: true },
    });
    assert.equal(bare.status, 400);
    assert.equal(bare.body.error.issues[0].path, 'unless_customer_replies');

    clock.advance(60 * 60_000);
    await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Re: Follow up', 'In-Reply-To': '<cy-1@cust.example>' }, 'Sorted it myself, thanks');
    clock.advance(23 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing mailed');
    const kept = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(kept.body.kind, 'note');
    assert.equal(kept.body.status, null);
    assert.equal(kept.body.details.held, 'customer_replied');
    assert.equal(kept.body.body, 'Any news?');
    const told = await s.app.db
      .selectFrom('notifications')
      .select(['person_id', 'trigger'])
      .where('conversation_id', '=', mail.conversation_id)
      .where('trigger', '=', 'reply_held')
      .execute();
    assert.deepEqual(told, [{ person_id: seed.ownerId, trigger: 'reply_held' }], 'its author is told, once');
    // It became a note: endpoints without include_notes (this one) hear nothing of it.
    assert.deepEqual(hooked(r.body.id), []);
    const noted = await s.app.db.selectFrom('events').select('type').where('type', '=', 'message.created').where('data', 'like', `%${r.body.id}%`).execute();
    assert.equal(noted.length, 1, 'message.created once, for the note');
    assert.deepEqual(await sendScheduledMessage(s.app, r.body.id), { done: 'not_scheduled' });

    // The customer wrote nothing after this one: it goes as any scheduled reply.
    const quiet = await schedule('Checking in');
    clock.advance(24 * 60 * 60_000);
    await s.app.jobs.drain();
    await sink.waitFor(before + 1);
    const sent = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${quiet.body.id}`, { token: seed.apiKey });
    assert.equal(sent.body.kind, 'message');
    assert.equal(sent.body.status, 'sent');
  });

  test('a scheduled reply moves to another time, sooner or later, until it goes; then 409', async () => {
    const { s, clock, sink, seed, address, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Di <di@cust.example>', Subject: 'Move me' });
    const before = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Moved reply', send_at: later(5 * 60 * 60_000) },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const move = (sendAt: string) =>
      s.request('PATCH', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey, body: { send_at: sendAt } });
    const bad = await move('tomorrow');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.issues[0].path, 'send_at');
    // Later first: at the old time nothing goes.
    const laterOne = await move(later(10 * 60 * 60_000));
    assert.equal(laterOne.status, 200, JSON.stringify(laterOne.body));
    assert.equal(laterOne.body.send_at, later(10 * 60 * 60_000));
    clock.advance(6 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'not at the old time');
    // Then sooner than that: it goes at the new time, once.
    const sooner = await move(later(60 * 60_000));
    assert.equal(sooner.status, 200);
    clock.advance(60 * 60_000);
    await s.app.jobs.drain();
    await sink.waitFor(before + 1);
    clock.advance(10 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 1, 'exactly once');
    const late = await move(later(60 * 60_000));
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'message_state');
  });

  test('forward and new conversation take send_at too', async () => {
    const { s, clock, sink, seed, address, hooked, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Fwd me' });
    const before = sink.messages.length;
    const fwd = await s.request('POST', `/v1/conversations/${mail.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: mail.message_id, to: ['billing@partner.example'], send_at: later(5000) },
    });
    assert.equal(fwd.status, 201, JSON.stringify(fwd.body));
    assert.equal(fwd.body.status, 'scheduled');
    const start = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: ['dee@cust.example'], subject: 'Hello', body: 'First words', send_at: later(5000) },
    });
    assert.equal(start.status, 201, JSON.stringify(start.body));
    assert.equal(start.body.message.status, 'scheduled');
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before);
    clock.advance(5000);
    await s.app.jobs.drain();
    const got = await sink.waitFor(before + 2);
    assert.deepEqual(
      got
        .slice(before)
        .flatMap((m) => m.to)
        .sort(),
      ['billing@partner.example', 'dee@cust.example'],
    );
    assert.equal(hooked(fwd.body.id).length, 1);
    assert.equal(hooked(start.body.message.id).length, 1);
  });

  test('a bad send_at is 400 naming the field and stores nothing', async () => {
    const { s, clock, seed, address, later } = scene();
    const mail = await deliverMail(s, address, { From: 'Eve <eve@cust.example>', Subject: 'Bad times' });
    const count = async () => (await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', mail.conversation_id).execute()).length;
    const n = await count();
    for (const send_at of ['tomorrow', '2030-01-01', later(-1000), clock.now().toISOString(), later(400 * 24 * 60 * 60_000), '2030-13-45T99:00:00Z']) {
      const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'x', send_at } });
      assert.equal(r.status, 400, `${send_at}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, /^send_at: /);
    }
    const note = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { kind: 'note', body: 'x', send_at: later(1000) },
    });
    assert.equal(note.status, 400);
    const fwd = await s.request('POST', `/v1/conversations/${mail.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: mail.message_id, to: ['x@partner.example'], send_at: 'soon' },
    });
    assert.equal(fwd.status, 400);
    assert.equal(await count(), n);
    // Another workspace's member cannot cancel (404 before anything else).
    const other = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/m_nope/schedule`, { token: seed.apiKey });
    assert.equal(other.status, 404);
  });

  test('undo_send_seconds: a per-person setting, default 10, 0 = off, at most 60', async () => {
    const { s, seed } = scene();
    // A person as sign-up makes them (the test fixtures turn the hold off).
    const person = await findOrCreatePerson(s.app, { email: 'fresh@example.com' });
    const fresh = await createSession(s.app, person.id);
    const me = await s.request('GET', '/v1/me', { token: fresh.token });
    assert.equal(me.body.person.undo_send_seconds, 10);
    const off = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: 0 } });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.person.undo_send_seconds, 0);
    for (const bad of [61, -1, 2.5]) {
      const r = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: bad } });
      assert.equal(r.status, 400, String(bad));
      assert.match(r.body.error.message, /undo_send_seconds/);
    }
    const max = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: 60 } });
    assert.equal(max.body.person.undo_send_seconds, 60);
    assert.equal((await s.request('GET', '/v1/me', { token: seed.ownerToken })).body.person.undo_send_seconds, 60);
  });
});
