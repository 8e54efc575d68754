// Issue 33: merge, undo (24 hours, exactly the recorded rows), quiet merges of imported history and
// the duplicate suggestion (split: split.test.ts). Inbound mail through the ingress, webhooks checked
// with standardwebhooks, outbound through an smtp-server sink (merging sends nothing), the clock
// moved by hand; the scene is merge-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadContactView } from '../../src/contacts/store.js';
import { registerMailId, startConversation } from '../../src/conversations/service.js';
import { eventsAfter, lastEventSeq } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { MIN, startMergeScene, stopMergeScene } from './merge-scene.js';

function attachmentMail(text: string) {
  const boundary = 'b-merge-1';
  return {
    headers: { 'Content-Type': `multipart/mixed; boundary="${boundary}"`, 'MIME-Version': '1.0' },
    body: [
      `--${boundary}`,
      'Content-Type: text/plain',
      '',
      text,
      `--${boundary}`,
      'Content-Type: application/pdf',
      'Content-Disposition: attachment; filename="order.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      'JVBERi0xLjQK',
      `--${boundary}--`,
      '',
    ].join('\r\n'),
  };
}

describe('merge and unmerge of conversations', () => {
  const scene = sceneOf(startMergeScene, stopMergeScene);

  test('merge moves every row in time order, unites participants, leaves a stub; later mail threads into the target; unmerge restores exactly', async () => {
    const { s, clock, rx, sink, api, mail, messagesOf, rows, deliveries } = scene();
    const a1 = await mail({ From: 'Ann <ann@cust.example>', Subject: 'Order 77 is late', 'Message-ID': '<m-a1@cust.example>' });
    const b1 = await mail(
      {
        From: 'Ann <ann@cust.example>',
        Cc: 'Ben <ben@cust.example>',
        Subject: 'Where is order 77?',
        'Message-ID': '<m-b1@cust.example>',
        ...attachmentMail('x').headers,
      },
      attachmentMail('Second try, with the invoice.').body,
    );
    assert.notEqual(a1.conversation_id, b1.conversation_id);
    const target = a1.conversation_id;
    const source = b1.conversation_id;
    clock.advance(MIN);
    assert.equal((await api('POST', `/v1/conversations/${source}/messages`, { kind: 'note', body: 'Same customer as the other one' })).status, 201);
    const a2 = await mail({
      From: 'Ann <ann@cust.example>',
      Subject: 'Re: Order 77 is late',
      'Message-ID': '<m-a2@cust.example>',
      'In-Reply-To': '<m-a1@cust.example>',
    });
    assert.equal(a2.conversation_id, target);
    assert.equal((await api('PATCH', `/v1/conversations/${source}`, { labels: ['late', 'vip'] })).status, 200);
    assert.equal((await api('PATCH', `/v1/conversations/${target}`, { labels: ['late'] })).status, 200);

    const before = await rows([target, source]);
    const sourceMessages = before.messages.filter((m) => m.conversation_id === source);
    assert.ok(sourceMessages.length >= 3 && before.attachments.some((a) => a.conversation_id === source));
    const seq = await lastEventSeq(s);
    const hooksFrom = rx.received.length;

    const merged = await api('POST', `/v1/conversations/${source}/merge`, { into_id: target });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.equal(merged.body.source.merged_into_id, target);
    assert.equal(merged.body.source.status, 'closed');
    assert.equal(merged.body.target.merged_into_id, null);
    assert.deepEqual(merged.body.target.labels, ['late', 'vip']);
    assert.deepEqual(merged.body.source.labels, []);
    assert.deepEqual(
      merged.body.target.participants.map((p: any) => [p.address, p.role]),
      [
        ['ann@cust.example', 'to'],
        ['ben@cust.example', 'cc'],
      ],
    );
    assert.equal(merged.body.undo_until, new Date(clock.now().getTime() + 24 * 3600_000).toISOString());

    // Every message, note, event and attachment of the source is in the target, in time order.
    const list = await messagesOf(target);
    for (const m of sourceMessages)
      assert.ok(
        list.some((x) => x.id === m.id),
        `message ${m.id} moved`,
      );
    const times = list.map((m) => m.created_at);
    assert.deepEqual(times, [...times].sort());
    const kinds = list.filter((m) => m.kind !== 'event').map((m) => m.body.trim().slice(0, 12));
    assert.deepEqual(kinds, ['Hello there.', 'Second try, ', 'Same custome', 'Hello there.']);
    assert.ok(list.find((m) => m.id === b1.message_id).attachments.length === 1);
    const stubMessages = await messagesOf(source);
    assert.deepEqual(
      stubMessages.map((m) => [m.kind, m.details.type]),
      [['event', 'merged_into']],
    );
    assert.equal((await api('GET', `/v1/conversations/${source}`)).body.merged_into_id, target);
    assert.deepEqual((await api('GET', `/v1/conversations/${source}/merge`)).body, { merged_into_id: target, undo_until: merged.body.undo_until });

    // One conversation.updated for each; nothing else (no message.created for the rows moved), nothing sent.
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.conversation.id]).sort(),
      [
        ['conversation.updated', source],
        ['conversation.updated', target],
      ].sort(),
    );
    const payloads = await deliveries(hooksFrom, (p) => p.data.merge?.action === 'merged' && [source, target].includes(p.data.conversation.id), 2);
    assert.equal(payloads.length, 2);
    const stubHook = payloads.find((p) => p.data.conversation.id === source);
    assert.equal(stubHook.type, 'conversation.updated');
    assert.equal(stubHook.data.conversation.merged_into_id, target);
    assert.deepEqual(
      { action: stubHook.data.merge.action, source_id: stubHook.data.merge.source_id, target_id: stubHook.data.merge.target_id },
      { action: 'merged', source_id: source, target_id: target },
    );
    assert.equal(payloads.find((p) => p.data.conversation.id === target).data.merge.action, 'merged');
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, 0, 'merging sends nothing');

    // The source's Message-IDs thread into the target from now on.
    const late = await mail({
      From: 'Ann <ann@cust.example>',
      Subject: 'Re: Where is order 77?',
      'Message-ID': '<m-b2@cust.example>',
      'In-Reply-To': '<m-b1@cust.example>',
    });
    assert.equal(late.conversation_id, target);
    assert.equal(late.new_conversation, false);

    // A second merge of the stub, a merge into the stub: refused, nothing changed.
    const third = await mail({ From: 'Ann <ann@cust.example>', Subject: 'Another thing', 'Message-ID': '<m-c1@cust.example>' });
    const frozen = await rows([target, source, third.conversation_id]);
    const again = await api('POST', `/v1/conversations/${source}/merge`, { into_id: third.conversation_id });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conversation_merged');
    const intoStub = await api('POST', `/v1/conversations/${third.conversation_id}/merge`, { into_id: source });
    assert.equal(intoStub.status, 409);
    assert.equal(intoStub.body.error.code, 'conversation_merged');
    assert.equal(intoStub.body.error.field, 'into_id');
    assert.deepEqual(await rows([target, source, third.conversation_id]), frozen);

    // Undo: the late reply stays in the target; exactly the moved rows go back.
    const seqUndo = await lastEventSeq(s);
    const undone = await api('POST', `/v1/conversations/${source}/unmerge`);
    assert.equal(undone.status, 200, JSON.stringify(undone.body));
    assert.equal(undone.body.source.merged_into_id, null);
    const afterUndo = await rows([target, source]);
    const strip = (c: any) => ({ ...c, updated_at: undefined });
    assert.deepEqual(afterUndo.conversations.find((c) => c.id === source)!, {
      ...before.conversations.find((c) => c.id === source)!,
      updated_at: afterUndo.conversations.find((c) => c.id === source)!.updated_at,
    });
    const targetNow = afterUndo.conversations.find((c) => c.id === target)!;
    const targetThen = before.conversations.find((c) => c.id === target)!;
    // The target kept the reply that came after the merge (its times are that reply's); all else is as before.
    assert.deepEqual(
      strip({ ...targetNow, last_message_at: null, preview: null, last_inbound_at: null }),
      strip({ ...targetThen, last_message_at: null, preview: null, last_inbound_at: null }),
    );
    for (const m of before.messages)
      assert.deepEqual(
        afterUndo.messages.find((x) => x.id === m.id),
        m,
        `message ${m.id} as before`,
      );
    const extra = afterUndo.messages.filter((m) => !before.messages.some((x) => x.id === m.id));
    assert.deepEqual(
      extra.filter((m) => m.kind !== 'event').map((m) => m.id),
      [late.message_id],
    );
    assert.deepEqual(
      extra
        .filter((m) => m.kind === 'event')
        .map((m) => [m.conversation_id === source ? 'source' : 'target', JSON.parse(m.details!).type])
        .sort(),
      [
        ['source', 'merged_into'],
        ['source', 'unmerged_from'],
        ['target', 'merge'],
        ['target', 'unmerge'],
      ].sort(),
    );
    assert.deepEqual(afterUndo.attachments, before.attachments);
    assert.deepEqual(afterUndo.labels, before.labels);
    assert.deepEqual(
      afterUndo.digests.filter((d) => d.message_id !== late.message_id),
      before.digests,
    );
    assert.deepEqual(
      afterUndo.mailIds.filter((d) => d.message_id !== late.message_id),
      before.mailIds,
    );
    const undoEvents = await eventsAfter(s, seqUndo);
    assert.deepEqual(
      undoEvents.map((e) => [e.type, e.data.conversation.id, e.data.merge.action]).sort(),
      [
        ['conversation.updated', source, 'unmerged'],
        ['conversation.updated', target, 'unmerged'],
      ].sort(),
    );
    // Mail naming the source's ids threads into it again.
    const back = await mail({
      From: 'Ann <ann@cust.example>',
      Subject: 'Re: Where is order 77?',
      'Message-ID': '<m-b3@cust.example>',
      References: '<m-b1@cust.example>',
    });
    assert.equal(back.conversation_id, source);
    const twice = await api('POST', `/v1/conversations/${source}/unmerge`);
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.code, 'not_merged');
  });

  test('bad input: itself, unknown and foreign ids, kinds that cannot merge, bad bodies; nothing changes', async () => {
    const { s, other, api, mail, rows } = scene();
    const a = await mail({ From: 'dora@cust.example', Subject: 'Bad input', 'Message-ID': '<bi-a@cust.example>' });
    const contact = (await api('GET', `/v1/conversations/${a.conversation_id}`)).body.contact_id;
    const chatOther = await conversationOf('chat', 'Chat of someone else', await otherContact());
    const chatSame = await conversationOf('chat', 'Chat of Dora', contact);
    const ids = [a.conversation_id, chatOther, chatSame];
    const frozen = await rows(ids);
    const cases: [string, unknown, number, string, string?][] = [
      [a.conversation_id, { into_id: a.conversation_id }, 400, 'invalid_request', 'into_id'],
      [a.conversation_id, { into_id: 'cv_doesnotexist' }, 404, 'not_found'],
      ['cv_doesnotexist', { into_id: a.conversation_id }, 404, 'not_found'],
      [a.conversation_id, {}, 400, 'invalid_request', 'into_id'],
      [a.conversation_id, { into_id: 5 }, 400, 'invalid_request', 'into_id'],
      [a.conversation_id, { into_id: chatSame }, 409, 'not_mergeable', 'into_id'],
      [chatOther, { into_id: a.conversation_id }, 409, 'not_mergeable', 'into_id'],
    ];
    for (const [from, body, status, code, field] of cases) {
      const r = await api('POST', `/v1/conversations/${from}/merge`, body);
      assert.equal(r.status, status, `${from} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, code);
      if (field) assert.ok(r.body.error.field === field || r.body.error.issues?.some((i: any) => i.path === field), JSON.stringify(r.body));
    }
    // Another workspace's key sees neither.
    const foreign = await s.request('POST', `/v1/conversations/${chatSame}/merge`, { token: other.apiKey, body: { into_id: a.conversation_id } });
    assert.equal(foreign.status, 404);
    const noAuth = await s.request('POST', `/v1/conversations/${chatSame}/merge`, { body: { into_id: 5 } });
    assert.equal(noAuth.status, 401);
    assert.equal((await api('POST', `/v1/conversations/${a.conversation_id}/unmerge`)).body.error.code, 'not_merged');
    assert.equal((await api('POST', `/v1/conversations/${a.conversation_id}/split`, { message_id: 'm_nope' })).status, 404);
    assert.equal((await api('POST', `/v1/conversations/${a.conversation_id}/split`, {})).status, 400);
    assert.deepEqual(await rows(ids), frozen);
    // A chat merges into an e-mail conversation of the same contact.
    const ok = await api('POST', `/v1/conversations/${chatSame}/merge`, { into_id: a.conversation_id });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  let contactCounter = 0;
  async function otherContact(): Promise<string> {
    const { api, mail } = scene();
    const m = await mail({ From: `someone${++contactCounter}@else.example`, Subject: 'Other', 'Message-ID': `<oc-${contactCounter}@else.example>` });
    return (await api('GET', `/v1/conversations/${m.conversation_id}`)).body.contact_id;
  }

  /** A conversation written below the API (a chat, or imported history), quiet like an import. */
  async function conversationOf(source: 'chat' | 'email', subject: string, contactId: string, opts: { imported?: boolean; messageId?: string } = {}) {
    const { s, clock, seed, channelId } = scene();
    clock.advance(MIN);
    const contact = (await loadContactView(s.app.db, seed.workspaceId, contactId))!;
    return s.app.db.transaction().execute(async (trx) => {
      const tx = { db: trx, clock };
      const at = clock.now();
      const view = await startConversation(tx, {
        conversation: {
          workspaceId: seed.workspaceId,
          inboxId: seed.inboxId,
          contactId,
          channelId: source === 'email' ? channelId : null,
          source,
          subject,
          imported: opts.imported,
          participants: source === 'email' ? [{ name: null, address: contact.emails[0], role: 'to' }] : null,
        },
        contact,
        message: {
          kind: 'message',
          direction: 'in',
          author: { type: 'contact', contactId },
          body: `${subject} (old)`,
          subject,
          mail: opts.messageId ? { messageId: opts.messageId, replyTo: contact.emails[0] } : undefined,
          createdAt: at,
          importedAt: opts.imported ? at : undefined,
        },
        quiet: opts.imported,
      });
      if (opts.messageId)
        await registerMailId(tx, {
          workspaceId: seed.workspaceId,
          inboxId: seed.inboxId,
          rfcId: opts.messageId,
          conversationId: view.conversation.id,
          messageId: view.message.id,
        });
      return view.conversation.id;
    });
  }

  test('imported conversations merge quietly: no message events, notifications, ratings or mail for the rows moved', async () => {
    const { s, seed, rx, sink, api, mail, messagesOf, deliveries } = scene();
    assert.equal((await api('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { enabled: true })).status, 200);
    const live = await mail({ From: 'Eve <eve@cust.example>', Subject: 'Live one', 'Message-ID': '<q-live@cust.example>' });
    const contact = (await api('GET', `/v1/conversations/${live.conversation_id}`)).body.contact_id;
    const old1 = await conversationOf('email', 'Old thread', contact, { imported: true, messageId: 'q-old1@cust.example' });
    const old2 = await conversationOf('email', 'Old thread again', contact, { imported: true, messageId: 'q-old2@cust.example' });
    const seq = await lastEventSeq(s);
    const hooksFrom = rx.received.length;
    await s.app.jobs.drain(); // what the mail above caused (new-conversation notifications) happens before the count
    const notifications = (await s.app.db.selectFrom('notifications').select('id').execute()).length;
    const r1 = await api('POST', `/v1/conversations/${old2}/merge`, { into_id: old1 });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    // A live conversation into the imported one: its stub is closed by a member, yet no rating is asked.
    const r2 = await api('POST', `/v1/conversations/${live.conversation_id}/merge`, { into_id: old1 });
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => e.type),
      ['conversation.updated', 'conversation.updated', 'conversation.updated', 'conversation.updated'],
    );
    const payloads = await deliveries(
      hooksFrom,
      (p) => p.data.merge?.action === 'merged' && [old1, old2, live.conversation_id].includes(p.data.conversation.id),
      4,
    );
    assert.deepEqual(payloads.map((p) => p.data.conversation.id).sort(), [old1, old2, old1, live.conversation_id].sort());
    await s.app.jobs.drain();
    assert.equal((await s.app.db.selectFrom('notifications').select('id').execute()).length, notifications);
    assert.equal(
      (await s.app.db.selectFrom('rating_requests').select('id').where('conversation_id', 'in', [old1, old2, live.conversation_id]).execute()).length,
      0,
    );
    assert.equal(sink.messages.length, 0);
    const list = await messagesOf(old1);
    assert.equal(list.filter((m) => m.kind === 'message').length, 3);
    // Imported history split quietly too.
    const split = await api('POST', `/v1/conversations/${old1}/split`, { message_id: list.find((m) => m.body === 'Old thread again (old)').id });
    assert.equal(split.status, 201, JSON.stringify(split.body));
    assert.equal(split.body.conversation.imported, true);
    assert.equal((await api('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { enabled: false })).status, 200);
  });

  // The tests below move the clock by a day (webhook deliveries of older events expire): they run last.
  test('a merge can be undone for 24 hours, then 410 and nothing changes', async () => {
    const { clock, api, mail, rows } = scene();
    const a = await mail({ From: 'cleo@cust.example', Subject: 'Refund', 'Message-ID': '<t-a@cust.example>' });
    const b = await mail({ From: 'cleo@cust.example', Subject: 'Refund please', 'Message-ID': '<t-b@cust.example>' });
    assert.equal((await api('POST', `/v1/conversations/${b.conversation_id}/merge`, { into_id: a.conversation_id })).status, 200);
    clock.advance(24 * 3600_000 - MIN);
    assert.ok((await api('GET', `/v1/conversations/${b.conversation_id}/merge`)).body.undo_until);
    clock.advance(2 * MIN);
    assert.equal((await api('GET', `/v1/conversations/${b.conversation_id}/merge`)).body.undo_until, null);
    const frozen = await rows([a.conversation_id, b.conversation_id]);
    const late = await api('POST', `/v1/conversations/${b.conversation_id}/unmerge`);
    assert.equal(late.status, 410);
    assert.equal(late.body.error.code, 'undo_expired');
    assert.deepEqual(await rows([a.conversation_id, b.conversation_id]), frozen);
  });

  test('possible duplicates: same contact, open, last 24 hours, similar subject; merge targets by subject or contact', async () => {
    const { s, clock, other, api, mail } = scene();
    const a = await mail({ From: 'Hana <hana@cust.example>', Subject: 'Cannot reset my password', 'Message-ID': '<d-a@cust.example>' });
    const b = await mail({ From: 'Hana <hana@cust.example>', Subject: 'RE: cannot reset my password!', 'Message-ID': '<d-b@cust.example>' });
    const c = await mail({ From: 'Hana <hana@cust.example>', Subject: 'Invoice for March', 'Message-ID': '<d-c@cust.example>' });
    const d = await mail({ From: 'Ivo <ivo@cust.example>', Subject: 'Cannot reset my password', 'Message-ID': '<d-d@cust.example>' });
    const dup = await api('GET', `/v1/conversations/${b.conversation_id}/duplicates`);
    assert.equal(dup.status, 200);
    assert.deepEqual(
      dup.body.data.map((x: any) => x.id),
      [a.conversation_id],
    );
    assert.equal(dup.body.data[0].contact.email, 'hana@cust.example');
    assert.deepEqual((await api('GET', `/v1/conversations/${c.conversation_id}/duplicates`)).body.data, []);
    // Shown, never applied: nothing was merged.
    assert.equal((await api('GET', `/v1/conversations/${b.conversation_id}`)).body.merged_into_id, null);
    // Closed ones and those older than a day are not offered.
    clock.advance(25 * 3600_000);
    assert.deepEqual((await api('GET', `/v1/conversations/${b.conversation_id}/duplicates`)).body.data, []);

    const bySubject = await api('GET', `/v1/conversations/${b.conversation_id}/merge-targets?q=${encodeURIComponent('RESET my')}`);
    assert.deepEqual(bySubject.body.data.map((x: any) => x.id).sort(), [a.conversation_id, d.conversation_id].sort());
    const byContact = await api('GET', `/v1/conversations/${b.conversation_id}/merge-targets?q=ivo`);
    assert.deepEqual(
      byContact.body.data.map((x: any) => x.id),
      [d.conversation_id],
    );
    const mine = await api('GET', `/v1/conversations/${b.conversation_id}/merge-targets`);
    assert.deepEqual(
      mine.body.data.map((x: any) => x.id),
      [c.conversation_id, a.conversation_id],
    );
    assert.equal((await s.request('GET', `/v1/conversations/${b.conversation_id}/merge-targets`, { token: other.apiKey })).status, 404);
  });
});
