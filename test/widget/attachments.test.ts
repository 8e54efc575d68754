import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';
const MAX_BYTES = 2048;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe('chat widget: visitor attachments', () => {
  let s: TestServer;
  let seed: Seed;
  let publicKey: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_ATTACHMENT_MAX_BYTES: String(MAX_BYTES) } });
    seed = await seedWorkspace(s.app);
    publicKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN], allowAnonymous: true })
    ).public_key!;
  });
  after(() => s.stop());

  const visitor = (method: string, path: string, opts: { token?: string; body?: unknown; raw?: Buffer | string; headers?: Record<string, string> } = {}) =>
    s.request(method, path, { token: opts.token, body: opts.body, raw: opts.raw, headers: { origin: ORIGIN, ...opts.headers } });

  async function chat(first = 'Hello') {
    const v = (await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey } })).body as { token: string; contact_id: string };
    const started = await visitor('POST', '/v1/widget/conversations', { token: v.token, body: { body: first } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    return { token: v.token, conversationId: started.body.conversation.id as string };
  }

  const upload = (token: string | undefined, conversationId: string, data: Buffer | string, type = 'image/png', filename = 'photo.png') =>
    visitor('POST', `/v1/widget/conversations/${conversationId}/attachments?filename=${encodeURIComponent(filename)}`, {
      token,
      raw: data,
      headers: { 'content-type': type },
    });

  const attachmentCount = async () =>
    Number(
      (
        await s.app.db
          .selectFrom('attachments')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test('a visitor uploads an image and sends it; the team sees it on the message and the visitor downloads it', async () => {
    const { token, conversationId } = await chat();
    const up = await upload(token, conversationId, PNG);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(up.body.filename, 'photo.png');
    assert.equal(up.body.content_type, 'image/png');
    assert.equal(up.body.size, PNG.length);
    assert.equal(up.body.url, `/v1/widget/attachments/${up.body.id}/content`);

    const sent = await visitor('POST', `/v1/widget/conversations/${conversationId}/messages`, { token, body: { body: '', attachment_ids: [up.body.id] } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.deepEqual(
      sent.body.attachments.map((a: { id: string }) => a.id),
      [up.body.id],
    );

    const team = await s.request('GET', `/v1/conversations/${conversationId}/messages`, { token: seed.apiKey });
    const teamMessage = team.body.data.find((m: { id: string }) => m.id === sent.body.id);
    assert.equal(teamMessage.attachments[0].id, up.body.id);
    const teamFile = await fetch(`${s.url}${teamMessage.attachments[0].url}`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.deepEqual(Buffer.from(await teamFile.arrayBuffer()), PNG);

    const listed = await visitor('GET', `/v1/widget/conversations/${conversationId}/messages`, { token });
    assert.deepEqual(
      listed.body.data.at(-1).attachments.map((a: { id: string }) => a.id),
      [up.body.id],
    );
    const own = await fetch(`${s.url}${up.body.url}`, { headers: { authorization: `Bearer ${token}`, origin: ORIGIN } });
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('content-type'), 'image/png');
    assert.equal(own.headers.get('access-control-allow-origin'), ORIGIN);
    assert.deepEqual(Buffer.from(await own.arrayBuffer()), PNG);
  });

  test('the team’s attachment reaches the visitor live and downloads; a note’s file and unsent uploads do not', async () => {
    const { token, conversationId } = await chat();
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    try {
      const teamUpload = async (name: string) => {
        const r = await s.request('POST', `/v1/conversations/${conversationId}/attachments?filename=${name}`, {
          token: seed.apiKey,
          raw: PNG,
          headers: { 'content-type': 'image/png' },
        });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.id as string;
      };
      const replied = await teamUpload('label.png');
      const noted = await teamUpload('internal.png');
      const unsent = await teamUpload('draft.png');
      assert.equal(
        (
          await s.request('POST', `/v1/conversations/${conversationId}/messages`, {
            token: seed.apiKey,
            body: { body: 'Here is your label', attachment_ids: [replied] },
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await s.request('POST', `/v1/conversations/${conversationId}/messages`, {
            token: seed.apiKey,
            body: { kind: 'note', body: 'internal', attachment_ids: [noted] },
          })
        ).status,
        201,
      );

      const deadline = Date.now() + 20_000;
      while (!frames.some((f) => f.type === 'message' && f.message.body === 'Here is your label')) {
        if (Date.now() > deadline) throw new Error('no live reply');
        await new Promise((r) => setTimeout(r, 20));
      }
      const live = frames.find((f) => f.type === 'message' && f.message.body === 'Here is your label');
      assert.deepEqual(
        live.message.attachments.map((a: { id: string; url: string }) => [a.id, a.url]),
        [[replied, `/v1/widget/attachments/${replied}/content`]],
      );

      const get = (id: string, t = token) =>
        fetch(`${s.url}/v1/widget/attachments/${id}/content`, { headers: { authorization: `Bearer ${t}`, origin: ORIGIN } });
      assert.equal((await get(replied)).status, 200);
      const noteFile = await get(noted);
      assert.equal(noteFile.status, 404);
      assert.equal(((await noteFile.json()) as any).error.code, 'not_found');
      assert.equal((await get(unsent)).status, 404);

      const stranger = await chat('Someone else');
      assert.equal((await get(replied, stranger.token)).status, 404, 'another visitor cannot download it');
      assert.equal((await get(replied, 'svc_cs_nope')).status, 401);
    } finally {
      ws.close();
    }
  });

  test('over SVC_ATTACHMENT_MAX_BYTES: 413 too_large, nothing kept', async () => {
    const { token, conversationId } = await chat();
    const before = await attachmentCount();
    const r = await upload(token, conversationId, Buffer.alloc(MAX_BYTES + 1, 1), 'application/octet-stream', 'big.bin');
    assert.equal(r.status, 413);
    assert.equal(r.body.error.code, 'too_large');
    assert.equal(await attachmentCount(), before);
  });

  test('no or a wrong session, a foreign conversation, another session’s upload and bad input are refused and change nothing', async () => {
    const mine = await chat();
    const theirs = await chat('Not yours');
    const before = await attachmentCount();
    assert.equal((await upload(undefined, mine.conversationId, PNG)).status, 401);
    assert.equal((await upload('svc_cs_wrong', mine.conversationId, PNG)).status, 401);
    const foreign = await upload(mine.token, theirs.conversationId, PNG);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'not_found');
    const wrongOrigin = await s.request('POST', `/v1/widget/conversations/${mine.conversationId}/attachments`, {
      token: mine.token,
      raw: PNG,
      headers: { origin: 'https://evil.example', 'content-type': 'image/png' },
    });
    assert.equal(wrongOrigin.status, 403);
    assert.equal(await attachmentCount(), before);

    // Another session's upload cannot be sent from this conversation.
    const theirUpload = await upload(theirs.token, theirs.conversationId, PNG);
    assert.equal(theirUpload.status, 201);
    const stolen = await visitor('POST', `/v1/widget/conversations/${mine.conversationId}/messages`, {
      token: mine.token,
      body: { body: 'mine now', attachment_ids: [theirUpload.body.id] },
    });
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.error.code, 'invalid_request');
    const unknown = await visitor('POST', `/v1/widget/conversations/${mine.conversationId}/messages`, {
      token: mine.token,
      body: { body: '', attachment_ids: ['att_nope'] },
    });
    assert.equal(unknown.status, 400);
    const empty = await visitor('POST', `/v1/widget/conversations/${mine.conversationId}/messages`, {
      token: mine.token,
      body: { body: ' ', attachment_ids: [] },
    });
    assert.equal(empty.status, 400);
    const badIds = await visitor('POST', `/v1/widget/conversations/${mine.conversationId}/messages`, {
      token: mine.token,
      body: { body: 'x', attachment_ids: 'att_1' },
    });
    assert.equal(badIds.status, 400);
    const messages = await visitor('GET', `/v1/widget/conversations/${mine.conversationId}/messages`, { token: mine.token });
    assert.equal(messages.body.data.length, 1, 'no refused message was kept');
    const stillUnsent = await s.app.db.selectFrom('attachments').select('message_id').where('id', '=', theirUpload.body.id).executeTakeFirstOrThrow();
    assert.equal(stillUnsent.message_id, null);
  });
});
