import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { ingressPort, rawMail, SmtpDialog, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { runSvc, startTestServer, type TestServer, testEnv } from '../helpers/server.js';

const SECRET = 'ingress-secret-123';
const MAX = 64 * 1024;

describe('inbound mail: SMTP listener, HTTP ingress, svc ingest-email', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let forwarding: string;
  let port: number;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET, SVC_INGRESS_MAX_BYTES: String(MAX), SVC_FORWARDING_DOMAIN: 'fwd.example.net' } });
    seed = await seedWorkspace(s.app);
    const channel = await seedEmailChannel(s.app, seed);
    address = channel.address!;
    forwarding = channel.forwarding_address!;
    port = ingressPort(s);
  });
  after(() => s.stop());

  test('stored text loses the blank lines at its end; indentation and inner blank lines stay', async () => {
    const body = '  indented first line\r\n\r\n\r\nafter two blank lines\r\n    code block\r\n\r\n \r\n\t\r\n\r\n';
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, Subject: 'Trailing lines' }, body),
      token: SECRET,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const msg = await s.app.db.selectFrom('messages').select('body').where('id', '=', r.body.data[0].message_id).executeTakeFirstOrThrow();
    assert.equal(msg.body, '  indented first line\n\n\nafter two blank lines\n    code block');
  });

  test('a mail over SMTP is committed before 250: contact, conversation, message, attachment, raw .eml, events', async () => {
    const info = await sendToIngress(port, {
      from: '"Ada Lovelace" <Ada@Example.org>',
      to: address,
      subject: 'Printer on fire',
      text: 'It is on fire.',
      html: '<p onclick="evil()">It is <b>on fire</b>.</p><script>alert(1)</script>',
      attachments: [{ filename: 'photo.png', content: Buffer.from('not really a png'), contentType: 'image/png' }],
    });
    assert.match(info.response, /^250 /);
    // The 250 came after the commit: everything is readable right now.
    const db = s.app.db;
    const contactEmail = await db.selectFrom('contact_emails').selectAll().where('email', '=', 'ada@example.org').executeTakeFirstOrThrow();
    const contact = await db.selectFrom('contacts').selectAll().where('id', '=', contactEmail.contact_id).executeTakeFirstOrThrow();
    assert.equal(contact.name, 'Ada Lovelace');
    const conv = await db.selectFrom('conversations').selectAll().where('contact_id', '=', contact.id).executeTakeFirstOrThrow();
    assert.equal(conv.inbox_id, seed.inboxId);
    assert.equal(conv.status, 'open');
    assert.equal(conv.subject, 'Printer on fire');
    assert.equal(conv.source, 'email');
    const msg = await db.selectFrom('messages').selectAll().where('conversation_id', '=', conv.id).executeTakeFirstOrThrow();
    assert.equal(msg.direction, 'in');
    assert.equal(msg.author_contact_id, contact.id);
    assert.match(msg.body, /on fire/);
    assert.ok(msg.html!.includes('<b>on fire</b>'));
    assert.ok(!/script|onclick/.test(msg.html!), 'HTML is sanitized before it is stored');
    const att = await db.selectFrom('attachments').selectAll().where('message_id', '=', msg.id).executeTakeFirstOrThrow();
    assert.equal(att.filename, 'photo.png');
    assert.equal(att.size, 16);
    assert.match(att.sha256, /^[0-9a-f]{64}$/);
    assert.ok(await s.app.storage.exists(att.storage_key));
    assert.ok(msg.raw_storage_key);
    assert.ok(await s.app.storage.exists(msg.raw_storage_key));
    const rawChunks: Buffer[] = [];
    for await (const c of await s.app.storage.get(msg.raw_storage_key)) rawChunks.push(c as Buffer);
    const rawBytes = Buffer.concat(rawChunks);
    assert.equal(msg.raw_size, rawBytes.length);
    assert.equal(msg.raw_sha256, createHash('sha256').update(rawBytes).digest('hex'));

    // The API shows it; the .eml and the attachment download.
    const api = await s.request('GET', `/v1/conversations/${conv.id}/messages`, { token: seed.apiKey });
    assert.equal(api.status, 200);
    assert.equal(api.body.data[0].attachments[0].filename, 'photo.png');
    const eml = await fetch(`${s.url}/v1/conversations/${conv.id}/messages/${msg.id}/raw`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(eml.status, 200);
    assert.match(await eml.text(), /Subject: Printer on fire/);
    const file = await fetch(`${s.url}${api.body.data[0].attachments[0].url}`, { headers: { authorization: `Bearer ${seed.apiKey}` } });
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'image/png');
    assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(await file.text(), 'not really a png');

    const events = await db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('person_id', 'is', null)
      .orderBy('seq')
      .execute();
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['conversation.created', 'message.created']);
    for (const e of events.slice(-2)) {
      assert.equal(e.inbox_id, seed.inboxId);
      assert.equal(e.contact_id, contact.id);
    }
    const created = JSON.parse(events[events.length - 1].data);
    assert.equal(created.message.id, msg.id);
    assert.equal(created.conversation.id, conv.id);
    assert.deepEqual(created.contact.emails, ['ada@example.org']);
    assert.ok(s.logs.some((l) => l.msg === 'mail received' && l.message_id === msg.id && l.via === 'smtp'));
  });

  test('the forwarding address of the channel is accepted too; the same mail is stored once', async () => {
    const messageId = '<dup-1@example.org>';
    // One message, forwarded to the forwarding address and delivered to the channel address.
    const mail = { to: address, subject: 'Forwarded', text: 'x', messageId, date: new Date('2026-01-02T03:04:05Z') };
    await sendToIngress(port, { ...mail, envelope: { from: 'customer@example.com', to: [forwarding] } });
    await sendToIngress(port, { ...mail, envelope: { from: 'customer@example.com', to: [address] } });
    const rows = await s.app.db.selectFrom('mail_ids').selectAll().where('rfc_id', '=', 'dup-1@example.org').execute();
    assert.equal(rows.length, 1);
    const msgs = await s.app.db.selectFrom('messages').select('id').where('mail_message_id', '=', 'dup-1@example.org').execute();
    assert.equal(msgs.length, 1);
    assert.ok(s.logs.some((l) => l.msg === 'mail received, duplicate'));
  });

  test('concurrent mail from a new sender makes one contact (racing writers retry)', async () => {
    const sends = Array.from({ length: 10 }, (_, i) =>
      sendToIngress(port, { from: 'Racer <racer@example.org>', to: address, subject: `race ${i}`, text: 'go' }),
    );
    const results = await Promise.all(sends);
    assert.ok(results.every((r) => /^250 /.test(r.response)));
    const owners = await s.app.db.selectFrom('contact_emails').select('contact_id').where('email', '=', 'racer@example.org').execute();
    assert.equal(owners.length, 1);
    const convs = await s.app.db.selectFrom('conversations').select('id').where('contact_id', '=', owners[0].contact_id).execute();
    assert.equal(convs.length, 10);
    const strays = await s.app.db
      .selectFrom('contacts')
      .leftJoin('contact_emails', 'contact_emails.contact_id', 'contacts.id')
      .leftJoin('conversations', 'conversations.contact_id', 'contacts.id')
      .select('contacts.id')
      .where('contacts.workspace_id', '=', seed.workspaceId)
      .where('contact_emails.email', 'is', null)
      .where('conversations.id', 'is', null)
      .execute();
    assert.deepEqual(strays, []);
  });

  test('unknown recipients and addresses of deleted workspaces get 550 at RCPT', async () => {
    await assert.rejects(
      sendToIngress(port, { to: 'nobody@example.com', text: 'x' }),
      (e: { responseCode?: number; command?: string }) => e.responseCode === 550,
    );
    const other = await seedWorkspace(s.app);
    const ch = await seedEmailChannel(s.app, other);
    await s.app.db.updateTable('workspaces').set({ deleted_at: new Date().toISOString() }).where('id', '=', other.workspaceId).execute();
    const { dialog } = await SmtpDialog.open(port);
    try {
      assert.match(await dialog.send('EHLO test.example'), /^250/);
      assert.match(await dialog.send('MAIL FROM:<a@example.org>'), /^250/);
      assert.match(await dialog.send(`RCPT TO:<${ch.address}>`), /^550 /);
      assert.match(await dialog.send(`RCPT TO:<${ch.forwarding_address}>`), /^550 /);
      assert.match(await dialog.send(`RCPT TO:<${address}>`), /^250/);
    } finally {
      dialog.close();
    }
  });

  test('size limit: SIZE= over the limit is refused at MAIL FROM, a longer DATA with 552, nothing stored', async () => {
    const before = await s.app.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const { dialog } = await SmtpDialog.open(port);
    try {
      const ehlo = await dialog.send('EHLO test.example');
      assert.match(ehlo, new RegExp(`SIZE ${MAX}`));
      assert.match(await dialog.send(`MAIL FROM:<a@example.org> SIZE=${MAX + 1}`), /^552 /);
      assert.match(await dialog.send('MAIL FROM:<a@example.org>'), /^250/);
      assert.match(await dialog.send(`RCPT TO:<${address}>`), /^250/);
      assert.match(await dialog.send('DATA'), /^354/);
      const big = rawMail({ To: address, Subject: 'big' }, 'x'.repeat(76) + '\r\n'.repeat(1) + ('y'.repeat(76) + '\r\n').repeat(Math.ceil(MAX / 78) + 10));
      assert.match(await dialog.data(big), /^552 /);
      // The connection stays usable; an empty message is refused too.
      assert.match(await dialog.send('MAIL FROM:<a@example.org>'), /^250/);
      assert.match(await dialog.send(`RCPT TO:<${address}>`), /^250/);
      assert.match(await dialog.send('DATA'), /^354/);
      assert.match(await dialog.data(Buffer.alloc(0)), /^554 /);
    } finally {
      dialog.close();
    }
    const after = await s.app.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  test('relays may authenticate with the ingress secret; a wrong secret is refused', async () => {
    const ok = await sendToIngress(port, { to: address, subject: 'via relay', text: 'x' }, { auth: { user: 'relay', pass: SECRET } });
    assert.match(ok.response, /^250 /);
    await assert.rejects(
      sendToIngress(port, { to: address, text: 'x' }, { auth: { user: 'relay', pass: 'wrong' } }),
      (e: { responseCode?: number }) => e.responseCode === 535,
    );
  });

  test('POST /v1/ingress/email: the ingress secret, recipients from ?to= or the headers, clear refusals', async () => {
    const mail = rawMail({ To: address, Subject: 'over http' });
    const noAuth = await s.request('POST', '/v1/ingress/email', { raw: mail, headers: { 'content-type': 'message/rfc822' } });
    assert.equal(noAuth.status, 401);
    const apiKey = await s.request('POST', '/v1/ingress/email', { raw: mail, token: seed.apiKey, headers: { 'content-type': 'message/rfc822' } });
    assert.equal(apiKey.status, 401);
    const byHeaders = await s.request('POST', '/v1/ingress/email', { raw: mail, token: SECRET, headers: { 'content-type': 'message/rfc822' } });
    assert.equal(byHeaders.status, 201);
    assert.equal(byHeaders.body.data[0].inbox_id, seed.inboxId);
    assert.equal(byHeaders.body.data[0].new_conversation, true);
    const again = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: mail,
      token: SECRET,
      headers: { 'content-type': 'message/rfc822' },
    });
    assert.equal(again.status, 201);
    assert.equal(again.body.data[0].duplicate, true);
    assert.equal(again.body.data[0].message_id, byHeaders.body.data[0].message_id);

    const unknown = await s.request('POST', '/v1/ingress/email?to=nobody%40example.com', { raw: rawMail({ To: 'x@y.example' }), token: SECRET });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
    const empty = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: Buffer.alloc(0), token: SECRET });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, 'invalid_request');
    const big = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: Buffer.alloc(MAX + 1, 0x61), token: SECRET });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'too_large');
  });

  test('svc ingest-email --to reads standard input through the same code', async () => {
    const r = await runSvc(['ingest-email', '--to', address, '--from', 'cli@example.org'], {
      env: s.env,
      input: rawMail({ From: 'CLI Sender <cli@example.org>', Subject: 'from the command' }),
    });
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    assert.match(id, /^m_/);
    const msg = await s.app.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(msg.subject, 'from the command');
    const unknown = await runSvc(['ingest-email', '--to', 'nobody@example.com'], { env: s.env, input: rawMail({}) });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: .*not found/m);
    const empty = await runSvc(['ingest-email', '--to', address], { env: s.env, input: '' });
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /empty/);
  });
});

describe('inbound mail is off without SVC_INGRESS_SECRET', () => {
  test('no SMTP listener, the HTTP ingress answers 404, forwarding addresses are hidden', async () => {
    const te = await testEnv();
    const s = await startTestServer({ testEnv: te });
    try {
      assert.equal(s.server.parts.mail, undefined);
      const r = await s.request('POST', '/v1/ingress/email', { raw: rawMail({}), token: 'anything' });
      assert.equal(r.status, 404);
      assert.ok(s.logs.some((l) => l.msg === 'SVC_INGRESS_SECRET is not set'));
      const seed = await seedWorkspace(s.app);
      const ch = await seedEmailChannel(s.app, seed);
      assert.equal(ch.forwarding_address, null);
      const rot = await s.request('POST', `/v1/channels/${ch.id}/forwarding-address/rotate`, { token: seed.apiKey });
      assert.equal(rot.status, 409);
      assert.equal(rot.body.error.code, 'forwarding_not_configured');
    } finally {
      await s.stop();
      await te.cleanup();
    }
  });
});
