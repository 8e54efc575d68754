// Issue 33: split of a conversation (the message and the later ones of its thread), and the MCP
// tools for merge, unmerge and split. Inbound mail through the ingress, webhooks checked with
// standardwebhooks, outbound through an smtp-server sink (splitting sends nothing), the clock moved
// by hand; the scene is merge-scene.ts (merge and unmerge: merge.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventsAfter, lastEventSeq } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { connectMcp } from '../mcp/helpers.js';
import { MIN, startMergeScene, stopMergeScene } from './merge-scene.js';

describe('split of conversations', () => {
  const scene = sceneOf(startMergeScene, stopMergeScene);

  test('split moves the message and the later ones of its thread; their Message-IDs follow; one update each', async () => {
    const { s, clock, rx, sink, api, mail, messagesOf, rows, deliveries } = scene();
    const x1 = await mail({ From: 'Finn <finn@cust.example>', Subject: 'Login broken', 'Message-ID': '<s-x1@cust.example>' });
    const id = x1.conversation_id;
    // Another question arrives in the same thread by mistake (it answers x1) and starts its own thread below.
    const y1 = await mail({
      From: 'Finn <finn@cust.example>',
      Subject: 'Also: invoice address',
      'Message-ID': '<s-y1@cust.example>',
      'In-Reply-To': '<s-x1@cust.example>',
    });
    assert.equal(y1.conversation_id, id);
    const x2 = await mail({
      From: 'Finn <finn@cust.example>',
      Subject: 'Re: Login broken',
      'Message-ID': '<s-x2@cust.example>',
      'In-Reply-To': '<s-x1@cust.example>',
      References: '<s-x1@cust.example>',
    });
    clock.advance(MIN);
    const reply = await api('POST', `/v1/conversations/${id}/messages`, { body: 'Which address?' }); // answers the newest mail (x2), stays
    assert.equal(reply.status, 201);
    const y2 = await mail({
      From: 'Finn <finn@cust.example>',
      Cc: 'Gus <gus@cust.example>',
      Subject: 'Re: Also: invoice address',
      'Message-ID': '<s-y2@cust.example>',
      'In-Reply-To': '<s-y1@cust.example>',
      References: '<s-x1@cust.example> <s-y1@cust.example>',
    });
    clock.advance(MIN);
    const note = await api('POST', `/v1/conversations/${id}/messages`, { kind: 'note', body: 'note stays' });
    assert.equal((await api('PATCH', `/v1/conversations/${id}`, { labels: ['billing', 'vip'] })).status, 200);
    const before = await rows([id]);
    const seq = await lastEventSeq(s);
    const hooksFrom = rx.received.length;

    const bad = await api('POST', `/v1/conversations/${id}/split`, { message_id: note.body.id });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.error.issues.some((i: any) => i.path === 'message_id'));
    const all = await api('POST', `/v1/conversations/${id}/split`, { message_id: x1.message_id });
    assert.equal(all.status, 409);
    assert.equal(all.body.error.code, 'nothing_left');
    assert.deepEqual(await rows([id]), before);

    const r = await api('POST', `/v1/conversations/${id}/split`, { message_id: y1.message_id });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.message_ids, [y1.message_id, y2.message_id]);
    const created = r.body.conversation;
    assert.equal(created.subject, 'Also: invoice address');
    // Labels are copied: the split-off part keeps what the thread was filed under, the source keeps them too.
    assert.deepEqual(created.labels, ['billing', 'vip']);
    assert.deepEqual(r.body.source.labels, ['billing', 'vip']);
    assert.deepEqual((await api('GET', `/v1/conversations/${created.id}`)).body.labels, ['billing', 'vip']);
    assert.equal(created.contact_id, r.body.source.contact_id);
    assert.deepEqual(
      created.participants.map((p: any) => [p.address, p.role]),
      [
        ['finn@cust.example', 'to'],
        ['gus@cust.example', 'cc'],
      ],
    );
    const moved = (await messagesOf(created.id)).filter((m) => m.kind !== 'event').map((m) => m.id);
    assert.deepEqual(moved, [y1.message_id, y2.message_id]);
    const left = (await messagesOf(id)).filter((m) => m.kind !== 'event').map((m) => m.id);
    assert.deepEqual(left, [x1.message_id, x2.message_id, reply.body.id, note.body.id]);
    // Each moved row is unchanged but for its conversation.
    const afterRows = await rows([id, created.id]);
    for (const m of before.messages) {
      const now = afterRows.messages.find((x) => x.id === m.id)!;
      assert.deepEqual({ ...now, conversation_id: m.conversation_id }, m);
    }
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.conversation.id]).sort(),
      [
        ['conversation.updated', created.id],
        ['conversation.updated', id],
      ].sort(),
    );
    const payloads = await deliveries(hooksFrom, (p) => p.data.split?.new_id === created.id, 2);
    assert.deepEqual(
      payloads.map((p) => p.data.split.new_id),
      [created.id, created.id],
    );
    for (const p of payloads) {
      assert.deepEqual(p.data.conversation.labels, ['billing', 'vip']);
      assert.deepEqual(p.data.split.labels_copied, ['billing', 'vip']);
    }
    const byLabel = await api('GET', `/v1/conversations?label=vip&status=open`);
    assert.ok(
      [created.id, id].every((c) => byLabel.body.data.some((x: any) => x.id === c)),
      JSON.stringify(byLabel.body),
    );
    // The Message-IDs followed: an answer to y2 lands in the new conversation, an answer to x2 stays.
    const y3 = await mail({ From: 'Finn <finn@cust.example>', Subject: 'Re: Also', 'Message-ID': '<s-y3@cust.example>', 'In-Reply-To': '<s-y2@cust.example>' });
    assert.equal(y3.conversation_id, created.id);
    const x3 = await mail({
      From: 'Finn <finn@cust.example>',
      Subject: 'Re: Login',
      'Message-ID': '<s-x3@cust.example>',
      'In-Reply-To': '<s-x2@cust.example>',
    });
    assert.equal(x3.conversation_id, id);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, 1, 'only the reply written above was sent');
  });

  test('MCP: merge_conversations, unmerge_conversation and split_conversation call the same services', async () => {
    const { s, seed, mail } = scene();
    const a = await mail({ From: 'mo@cust.example', Subject: 'Via MCP', 'Message-ID': '<mcp-a@cust.example>' });
    const b = await mail({ From: 'mo@cust.example', Subject: 'Via MCP 2', 'Message-ID': '<mcp-b@cust.example>' });
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const self = await mcp.call('merge_conversations', { conversation_id: a.conversation_id, into_id: a.conversation_id });
      assert.equal(self.isError, true);
      assert.match(self.text, /invalid_request/);
      const merged = await mcp.call('merge_conversations', { conversation_id: b.conversation_id, into_id: a.conversation_id });
      assert.equal(merged.isError, false, merged.text);
      assert.equal((merged.body as any).source.merged_into_id, a.conversation_id);
      const undone = await mcp.call('unmerge_conversation', { conversation_id: b.conversation_id });
      assert.equal(undone.isError, false, undone.text);
      assert.equal((undone.body as any).source.merged_into_id, null);
      const reply = await mail({
        From: 'mo@cust.example',
        Subject: 'Re: Via MCP',
        'Message-ID': '<mcp-c@cust.example>',
        'In-Reply-To': '<mcp-a@cust.example>',
      });
      const split = await mcp.call('split_conversation', { conversation_id: a.conversation_id, message_id: reply.message_id });
      assert.equal(split.isError, false, split.text);
      assert.deepEqual((split.body as any).message_ids, [reply.message_id]);
    } finally {
      await mcp.close();
    }
  });
});
