// Issue 33: starting a conversation by mail (forwarding: forward.test.ts). Outbound caught by an
// smtp-server sink (envelope, headers and parts as sent), webhooks checked with standardwebhooks,
// answers threading back through the ingress; the scene is forward-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { rawMail, seedEmailChannel } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { header, MAX_BYTES, startForwardScene, stopForwardScene } from './forward-scene.js';

describe('new conversations by mail', () => {
  const scene = sceneOf(startForwardScene, stopForwardScene);

  test('a new conversation: pending, contact made, participants, first mail as written; the answer threads in; webhooks', async () => {
    const { s, seed, inbound, sendAll, webhooksFor } = scene();
    const r = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Hana New <HANA@new.example>'],
        cc: ['ivo@new.example'],
        bcc: ['audit@hidden.example'],
        subject: 'Your trial',
        html: '<p>Hello <b>Hana</b>, how is the trial going?</p>',
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { conversation, message } = r.body;
    assert.equal(conversation.status, 'pending');
    assert.equal(conversation.source, 'email');
    assert.equal(conversation.subject, 'Your trial');
    assert.deepEqual(conversation.participants, [
      { name: 'Hana New', address: 'hana@new.example', role: 'to' },
      { name: null, address: 'ivo@new.example', role: 'cc' },
    ]);
    const contact = (await s.request('GET', `/v1/contacts/${conversation.contact_id}`, { token: seed.apiKey })).body;
    assert.equal(contact.name, 'Hana New');
    assert.deepEqual(contact.emails, ['hana@new.example']);
    assert.equal(message.status, 'pending');
    assert.deepEqual(message.email.bcc, [{ name: null, address: 'audit@hidden.example' }]);

    const mail = await sendAll();
    assert.equal(mail.parsed.subject, 'Your trial', 'the first mail answers nothing: no Re:');
    assert.equal(mail.parsed.inReplyTo, undefined);
    assert.deepEqual([...mail.to].sort(), ['audit@hidden.example', 'hana@new.example', 'ivo@new.example']);
    assert.deepEqual(header(mail, 'cc'), [{ name: null, address: 'ivo@new.example' }]);
    assert.ok(!mail.raw.toString().includes('audit@hidden'));
    assert.match(mail.raw.toString(), /multipart\/alternative/);
    assert.ok(mail.parsed.text!.includes('Hello Hana, how is the trial going?'));

    const created = await webhooksFor('conversation.created', conversation.id);
    assert.equal(created.length, 1);
    assert.equal(created[0].p.data.conversation.status, 'pending');
    const messageHooks = await webhooksFor('message.created', message.id);
    assert.equal(messageHooks.length, 1);
    assert.ok(!messageHooks[0].r.body.includes('audit@hidden.example'));

    const answer = await inbound(
      rawMail({
        From: 'Hana New <hana@new.example>',
        Subject: 'Re: Your trial',
        'Message-ID': '<n1-b@new.example>',
        'In-Reply-To': `<${message.email.message_id}>`,
      }),
    );
    assert.equal(answer.conversation_id, conversation.id);
    const list = await s.request('GET', `/v1/conversations?contact_id=${conversation.contact_id}`, { token: seed.apiKey });
    assert.equal(list.body.data.length, 1, 'one conversation for the contact');

    // Writing to a known contact by id reuses it; the second mail of that conversation is a reply (Re:).
    const again = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: [conversation.contact_id], subject: 'Second topic', body: 'Another question.' },
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.conversation.contact_id, conversation.contact_id);
    assert.deepEqual(again.body.message.email.to, [{ name: 'Hana New', address: 'hana@new.example' }]);
    const second = await sendAll();
    assert.equal(second.parsed.subject, 'Second topic');
  });

  test('a new conversation with files: uploaded to the inbox first (the reply limit), the first mail carries them; ids are checked', async () => {
    const { s, seed, other, clock, sendAll, counts, webhooksFor } = scene();
    const upload = (inboxId: string, filename: string, type: string, bytes: Buffer, token = seed.apiKey) =>
      s.request('POST', `/v1/inboxes/${inboxId}/attachments?filename=${filename}`, { token, raw: bytes, headers: { 'content-type': type } });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const picture = await upload(seed.inboxId, 'shot.png', 'image/png', png);
    assert.equal(picture.status, 201, JSON.stringify(picture.body));
    const file = await upload(seed.inboxId, 'terms.txt', 'text/plain', Buffer.from('The terms'));
    assert.equal(file.status, 201, JSON.stringify(file.body));
    assert.deepEqual([file.body.filename, file.body.size, file.body.inline], ['terms.txt', 9, false]);
    // Before it is sent the upload can be read back by its URL, like a reply's.
    const content = await s.request('GET', file.body.url, { token: seed.apiKey });
    assert.equal(content.status, 200);
    assert.equal(content.body, 'The terms');
    // The same limit as a reply's upload; another workspace's inbox is 404; nothing is stored.
    const start = await counts();
    const big = await upload(seed.inboxId, 'big.bin', 'application/octet-stream', Buffer.alloc(MAX_BYTES + 1));
    assert.equal(big.status, 413, JSON.stringify(big.body));
    assert.equal((await upload(other.inboxId, 'x.txt', 'text/plain', Buffer.from('x'))).status, 404);
    assert.equal((await upload('inb_unknown', 'x.txt', 'text/plain', Buffer.from('x'))).status, 404);
    assert.equal((await s.request('GET', `/v1/attachments/${file.body.id}`, { token: other.apiKey })).status, 404);
    const uploads = async () => (await s.app.db.selectFrom('inbox_uploads').select('id').orderBy('id').execute()).map((r) => r.id);
    assert.deepEqual(await uploads(), [picture.body.id, file.body.id].sort());
    // Another workspace cannot send them.
    const foreign = await s.request('POST', '/v1/conversations', {
      token: other.apiKey,
      body: { inbox_id: other.inboxId, to: ['uma@new.example'], subject: 'Hi', body: 'x', attachment_ids: [file.body.id] },
    });
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(foreign.body.error.issues[0].path, 'attachment_ids.0');
    assert.deepEqual(await counts(), start);

    const r = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Uma <uma@new.example>'],
        subject: 'The contract',
        html: `<p>Signed: <img src="${picture.body.url}" alt="shot"></p>`,
        attachment_ids: [file.body.id, picture.body.id],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const byName = new Map((r.body.message.attachments as { filename: string; id: string; inline: boolean }[]).map((a) => [a.filename, a]));
    assert.equal(byName.get('terms.txt')?.id, file.body.id);
    assert.equal(byName.get('terms.txt')?.inline, false);
    assert.equal(byName.get('shot.png')?.inline, true);
    assert.deepEqual(await uploads(), [], 'the uploads now belong to the conversation');
    const mail = await sendAll();
    assert.deepEqual(mail.to, ['uma@new.example']);
    const parts = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
    assert.equal(parts.get('terms.txt')?.content.toString(), 'The terms');
    assert.equal(parts.get('terms.txt')?.contentDisposition, 'attachment');
    assert.ok(parts.get('shot.png')?.content.equals(png));
    assert.equal(parts.get('shot.png')?.related, true, 'the picture is an inline part');
    assert.match(mail.raw.toString(), new RegExp(`Content-ID: <${picture.body.id}@svc>`, 'i'));
    const hooks = await webhooksFor('message.created', r.body.message.id);
    assert.deepEqual(hooks[0].p.data.message.attachments.map((a: { filename: string }) => a.filename).sort(), ['shot.png', 'terms.txt']);

    // Used once: naming it again is 400 and writes nothing.
    const before = await counts();
    const again = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: ['uma@new.example'], subject: 'Again', body: 'x', attachment_ids: [file.body.id] },
    });
    assert.equal(again.status, 400, JSON.stringify(again.body));
    assert.equal(again.body.error.issues[0].path, 'attachment_ids.0');
    assert.deepEqual(await counts(), before);

    // An upload never sent goes after a day, with its file.
    const stray = await upload(seed.inboxId, 'stray.txt', 'text/plain', Buffer.from('stray'));
    clock.advance(25 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.deepEqual(await uploads(), []);
    assert.equal((await s.request('GET', `/v1/attachments/${stray.body.id}`, { token: seed.apiKey })).status, 404);
  });

  test('bad new conversations: 404 for unknown or foreign inbox, channel and contact; 400 naming the field; 409 without an e-mail channel; nothing changes', async () => {
    const { s, seed, other, address, sink, counts } = scene();
    const bare = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'No mail' });
    const otherInbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const salesChannel = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: otherInbox.id }, { smtpPort: sink.port });
    const limited = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'sales only', inboxIds: [otherInbox.id] })).secret;
    const start = await counts();
    const many = Array.from({ length: 51 }, (_, i) => `p${i}@partner.example`);
    const post = (body: Record<string, unknown>, token = seed.apiKey) =>
      s.request('POST', '/v1/conversations', { token, body: { inbox_id: seed.inboxId, to: ['kim@new.example'], subject: 'Hi', body: 'Hello', ...body } });
    const cases: [Awaited<ReturnType<typeof post>>, number, string | null, string?][] = [
      [await post({ inbox_id: 'inb_unknown', to: many }), 404, null],
      [await post({ inbox_id: other.inboxId }), 404, null],
      [await post({ to: many }, limited), 404, null],
      [await post({ channel_id: 'ch_unknown' }), 404, null],
      [await post({ channel_id: salesChannel.id }), 400, 'channel_id'],
      [await post({ to: ['ct_unknown'] }), 404, null],
      [await post({ to: many }), 400, 'to'],
      [await post({ to: ['nope'] }), 400, 'to.0'],
      [await post({ cc: [`Us <${address}>`] }), 400, 'cc.0'],
      [await post({ subject: '  ' }), 400, 'subject'],
      [await post({ body: ' ' }), 400, 'body'],
      [await post({ inbox_id: bare.id }), 409, null, 'no_email_channel'],
      [await post({ attachment_ids: ['att_unknown'] }), 400, 'attachment_ids.0'],
    ];
    for (const [r, status, path, code] of cases) {
      assert.equal(r.status, status, JSON.stringify(r.body));
      if (path) assert.equal(r.body.error.issues[0].path, path, JSON.stringify(r.body));
      if (code) assert.equal(r.body.error.code, code);
    }
    assert.deepEqual(await counts(), start);
  });
});
